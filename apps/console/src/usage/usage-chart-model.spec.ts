import { usageChartModel } from './usage-chart-model';

const row = (start: string, owner: string, gpuSeconds: number) => ({ start, owner, gpuSeconds, cpuSeconds: 0, attempts: 0, jobs: 0 });

describe('usageChartModel', () => {
  it.each([
    ['no rows: an empty chart with a scale', [], { buckets: [], series: [], max: 1 }],
    [
      'owners stacked per bucket, the largest first, missing buckets zero',
      [row('2026-01-02T00:00:00.000Z', 'b', 3600), row('2026-01-01T00:00:00.000Z', 'a', 7200), row('2026-01-02T00:00:00.000Z', 'a', 10800)],
      {
        buckets: ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'],
        series: [
          { owner: 'a', gpuHours: [2, 3], total: 5 },
          { owner: 'b', gpuHours: [0, 1], total: 1 },
        ],
        max: 4,
      },
    ],
  ])('%s', (_, rows, model) => expect(usageChartModel(rows)).toEqual(model));
});
