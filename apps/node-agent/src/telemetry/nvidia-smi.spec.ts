import { gpuModelName, parseNvidiaSmi } from './nvidia-smi';

describe('gpuModelName', () => {
  it.each([
    ['NVIDIA H100 80GB HBM3', 'H100'],
    ['NVIDIA H200', 'H200'],
    ['NVIDIA A100-SXM4-80GB', 'A100'],
    ['NVIDIA L4', 'L4'],
    ['NVIDIA L40S', 'L40S'],
    ['Tesla T4', 'T4'],
    ['NVIDIA GeForce RTX 4090', 'RTX4090'],
    ['Mystery Accelerator', 'MYSTERY'],
  ])('%s -> %s', (name, model) => expect(gpuModelName(name)).toBe(model));
});

describe('parseNvidiaSmi', () => {
  it('parses one line per GPU', () => {
    const out = '0, NVIDIA H100 80GB HBM3, 81559, 2048, 93, P0\n1, NVIDIA H100 80GB HBM3, 81559, 0, 0, P8\n';
    expect(parseNvidiaSmi(out)).toEqual([
      { index: 0, model: 'H100', memoryMiB: 81559, memoryUsedMiB: 2048, utilization: 0.93, healthy: true },
      { index: 1, model: 'H100', memoryMiB: 81559, memoryUsedMiB: 0, utilization: 0, healthy: true },
    ]);
  });

  it('marks a GPU with unreadable numbers unhealthy', () => {
    const [gpu] = parseNvidiaSmi('0, NVIDIA A100-SXM4-80GB, [N/A], [N/A], [N/A], P0');
    expect(gpu).toMatchObject({ model: 'A100', healthy: false, memoryMiB: 0 });
  });

  it('returns nothing for empty output', () => expect(parseNvidiaSmi('\n')).toEqual([]));
});
