import { age, renderTable } from './table';

const rows = [
  { id: 'a1', name: 'a-very-long-job-name-that-goes-on', state: 'RUNNING' },
  { id: 'b2', name: 'short', state: 'QUEUED' },
];
const columns = [
  { header: 'ID', value: (r: (typeof rows)[0]) => r.id },
  { header: 'NAME', value: (r: (typeof rows)[0]) => r.name, shrink: true },
  { header: 'STATE', value: (r: (typeof rows)[0]) => r.state },
];

describe('renderTable', () => {
  it('aligns columns', () => {
    expect(renderTable(rows, columns, Infinity).split('\n')).toEqual([
      'ID  NAME                               STATE',
      'a1  a-very-long-job-name-that-goes-on  RUNNING',
      'b2  short                              QUEUED',
    ]);
  });

  it.each([30, 40, 25])('fits %i columns by shortening what may shrink', (width) => {
    const lines = renderTable(rows, columns, width).split('\n');
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
    expect(lines[1]).toContain('…');
    expect(lines[1].startsWith('a1')).toBe(true);
    expect(lines[1].endsWith('RUNNING')).toBe(true);
  });

  it('keeps a few characters of a shrunk column and lets the terminal wrap beyond that', () => {
    const lines = renderTable(rows, columns, 5).split('\n');
    expect(lines[1]).toMatch(/^a1 {2}a-ver… {2}RUNNING$/);
  });

  it('leaves out optional columns, last first, when shrinking is not enough', () => {
    const withOptional = [columns[0], { ...columns[2], optional: true }, { ...columns[1], optional: true }];
    expect(renderTable(rows, withOptional, 16).split('\n')).toEqual(['ID  STATE', 'a1  RUNNING', 'b2  QUEUED']);
    expect(renderTable(rows, withOptional, 21).split('\n')[1]).toBe('a1  RUNNING  a-very-…');
  });

  it('puts multi-line values on one line', () => {
    expect(renderTable([{ id: 'x', name: 'a\nb', state: 's' }], columns, Infinity).split('\n')[1]).toBe('x   a b   s');
  });
});

describe('age', () => {
  const now = Date.parse('2026-12-02T12:00:00Z');
  it.each([
    ['2026-12-02T11:59:58Z', '2s'],
    ['2026-12-02T11:57:00Z', '3m'],
    ['2026-12-02T07:00:00Z', '5h'],
    ['2026-11-29T12:00:00Z', '3d'],
    [null, '-'],
  ])('%s -> %s', (iso, expected) => expect(age(iso, now)).toBe(expected));
});
