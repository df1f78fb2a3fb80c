import { NodeGridRow } from '@gantry/persistence';
import { buildHeatmap } from './cluster-heatmap.builder';

const NOW = 1_800_000_000_000;
const T = { suspectMs: 15_000, deadMs: 40_000 };
const row = (id: string, zone: string, rack: string, more: Partial<NodeGridRow> = {}): NodeGridRow => ({
  id,
  zone,
  rack,
  gpusTotal: 8,
  gpusAllocated: 0,
  cordoned: false,
  ...more,
});

describe('buildHeatmap', () => {
  it('groups consecutive rows into racks and keeps the per-node arrays aligned with nodeIds', () => {
    const grid = [
      row('a1', 'z1', 'r1'),
      row('a2', 'z1', 'r1', { gpusAllocated: 3, cordoned: true }),
      row('b1', 'z1', 'r2'),
      row('c1', 'z2', 'r1', { gpusTotal: 0 }),
    ];
    const view = buildHeatmap(grid, [NOW, NOW - 20_000, NOW - 50_000, null], [null, null, null, null], NOW, T);
    expect(view.racks).toEqual([
      { zone: 'z1', rack: 'r1', nodes: 2 },
      { zone: 'z1', rack: 'r2', nodes: 1 },
      { zone: 'z2', rack: 'r1', nodes: 1 },
    ]);
    expect(view.nodeIds).toEqual(['a1', 'a2', 'b1', 'c1']);
    expect(view.health).toBe('HDUU');
    expect(view.cordoned).toEqual([1]);
    expect(view.gpusTotal).toEqual([8, 8, 8, 0]);
    expect(view.gpusAllocated).toEqual([0, 3, 0, 0]);
    expect(view.at).toBe(new Date(NOW).toISOString());
  });

  it('treats the same rack name in two zones as two racks', () => {
    const view = buildHeatmap([row('a', 'z1', 'r1'), row('b', 'z2', 'r1')], [NOW, NOW], [null, null], NOW, T);
    expect(view.racks.map((r) => `${r.zone}/${r.rack}:${r.nodes}`)).toEqual(['z1/r1:1', 'z2/r1:1']);
  });

  it.each([
    ['no telemetry yet', null, -1, -1],
    ['8 GPUs at a mean of 50 %, CPU 25 %', { gpus: 8, gpuUtilMilli: 4000, cpuUtilMilli: 250 }, 50, 25],
    ['no GPUs: GPU utilisation unknown, CPU known', { gpus: 0, gpuUtilMilli: 0, cpuUtilMilli: 999 }, -1, 100],
    ['rounds to whole percents', { gpus: 3, gpuUtilMilli: 1000, cpuUtilMilli: 4 }, 33, 0],
    ['never above 100', { gpus: 1, gpuUtilMilli: 5000, cpuUtilMilli: 5000 }, 100, 100],
  ])('utilisation percent: %s', (_case, contribution, gpu, cpu) => {
    const view = buildHeatmap([row('a', 'z', 'r')], [NOW], [contribution], NOW, T);
    expect(view.gpuUtil).toEqual([gpu]);
    expect(view.cpuUtil).toEqual([cpu]);
  });

  it('answers an empty fleet with empty arrays', () => {
    expect(buildHeatmap([], [], [], NOW, T)).toMatchObject({ racks: [], nodeIds: [], health: '', cordoned: [], gpuUtil: [] });
  });
});
