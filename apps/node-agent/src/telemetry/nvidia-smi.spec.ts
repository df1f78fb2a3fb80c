import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gpuModelName, parseNvidiaSmi, queryNvidiaSmi } from './nvidia-smi';

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

  it("reads what a real H200 printed for the agent's query, idle and busy (scripts/device/gpu-check.sh, 2026-12-04)", () => {
    expect(parseNvidiaSmi('0, NVIDIA H200, 143771, 0, 0, P0\n')).toEqual([
      { index: 0, model: 'H200', memoryMiB: 143771, memoryUsedMiB: 0, utilization: 0, healthy: true },
    ]);
    expect(parseNvidiaSmi('0, NVIDIA H200, 143771, 1011, 100, P0\n')).toEqual([
      { index: 0, model: 'H200', memoryMiB: 143771, memoryUsedMiB: 1011, utilization: 1, healthy: true },
    ]);
  });

  it('returns nothing for empty output', () => expect(parseNvidiaSmi('\n')).toEqual([]));
});

describe('queryNvidiaSmi with another program (GANTRY_NVIDIA_SMI)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fake-smi-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the GPUs a stand-in prints, an unreadable one unhealthy', async () => {
    const smi = join(dir, 'nvidia-smi');
    writeFileSync(smi, '#!/bin/sh\nprintf "0, NVIDIA H100 80GB HBM3, 81559, 10, 5, P0\\n1, NVIDIA H100 80GB HBM3, [N/A], [N/A], [N/A], P0\\n"\n');
    chmodSync(smi, 0o755);
    const gpus = await queryNvidiaSmi(5000, smi);
    expect(gpus!.map((g) => [g.index, g.model, g.healthy])).toEqual([
      [0, 'H100', true],
      [1, 'H100', false],
    ]);
  });

  it('reports no GPUs (null) when the program does not exist', async () => {
    expect(await queryNvidiaSmi(5000, join(dir, 'absent'))).toBeNull();
  });
});
