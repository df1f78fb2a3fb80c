import { renderUsageCsv } from './usage-csv';

describe('renderUsageCsv', () => {
  const row = { start: '2026-01-01T00:00:00.000Z', gpuSeconds: 1.5, cpuSeconds: 3, attempts: 1, jobs: 1 };

  it.each([
    ['no grouping', [row], [], 'start,gpuSeconds,cpuSeconds,attempts,jobs\r\n2026-01-01T00:00:00.000Z,1.5,3,1,1\r\n'],
    [
      'grouped columns in a fixed order',
      [{ ...row, queue: 'q', owner: 'a', gpuModel: null }],
      ['gpuModel', 'owner', 'queue'],
      'start,owner,queue,gpuModel,gpuSeconds,cpuSeconds,attempts,jobs\r\n2026-01-01T00:00:00.000Z,a,q,,1.5,3,1,1\r\n',
    ],
    [
      'quoting',
      [{ ...row, owner: 'a,"b"\nc' }],
      ['owner'],
      'start,owner,gpuSeconds,cpuSeconds,attempts,jobs\r\n2026-01-01T00:00:00.000Z,"a,""b""\nc",1.5,3,1,1\r\n',
    ],
    ['no rows: the header alone', [], ['owner'], 'start,owner,gpuSeconds,cpuSeconds,attempts,jobs\r\n'],
  ] as const)('%s', (_, rows, groupBy, csv) => expect(renderUsageCsv(rows, groupBy)).toBe(csv));
});
