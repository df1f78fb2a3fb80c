import { MASTER_PORT_BASE, gangMasterPort, rankGpuIndices } from './gang-rendezvous';

describe('gangMasterPort', () => {
  it.each<[string, string, number[], number]>([
    ['rank 0 on devices 0-3', 'job-a', [0, 1, 2, 3], 29500],
    ['rank 0 on devices 4-7', 'job-b', [4, 5, 6, 7], 29504],
    ['unsorted devices: the lowest', 'job-c', [6, 2], 29502],
    ['the highest device index', 'job-d', [63], 29563],
  ])('%s', (_n, jobId, devices, port) => expect(gangMasterPort(jobId, devices)).toBe(port));

  it("GPU gangs sharing rank 0's node never share a port: their devices differ", () => {
    const ports = [
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
    ].map((d, i) => gangMasterPort(`job-${i}`, d));
    expect(new Set(ports).size).toBe(4);
  });

  it('CPU-only gangs get a port above every GPU port, the same for the same job', () => {
    for (const id of ['0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f', 'x', '']) {
      const p = gangMasterPort(id, []);
      expect(p).toBeGreaterThanOrEqual(MASTER_PORT_BASE + 64);
      expect(p).toBeLessThan(MASTER_PORT_BASE + 64 + 1000);
      expect(gangMasterPort(id, [])).toBe(p);
    }
  });
});

describe('rankGpuIndices', () => {
  it.each<[string, number[], number, number, number, number[]]>([
    ['rank 0 of two', [0, 1, 4, 5], 2, 2, 0, [0, 1]],
    ['rank 1 of two', [0, 1, 4, 5], 2, 2, 1, [4, 5]],
    ['no GPUs', [], 0, 3, 2, []],
    ['an attempt placed before devices were assigned', [], 4, 1, 0, []],
    ['a list that does not cover every rank', [0, 1], 2, 2, 1, []],
  ])('%s', (_n, flat, gpus, ranks, rank, expected) => expect(rankGpuIndices(flat, gpus, ranks, rank)).toEqual(expected));
});
