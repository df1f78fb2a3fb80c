import { averageUtilisation, utilisationContribution } from './utilisation-contribution';

describe('utilisationContribution', () => {
  it.each([
    ['no GPUs', [], 0.5, { gpus: 0, gpuUtilMilli: 0, cpuUtilMilli: 500 }],
    ['two GPUs', [{ utilization: 0.9 }, { utilization: 0.1 }], 0, { gpus: 2, gpuUtilMilli: 1000, cpuUtilMilli: 0 }],
    ['rounds to thousandths', [{ utilization: 0.12345 }], 0.0004, { gpus: 1, gpuUtilMilli: 123, cpuUtilMilli: 0 }],
    ['clamps out-of-range values', [{ utilization: 1.5 }], -1, { gpus: 1, gpuUtilMilli: 1000, cpuUtilMilli: 0 }],
  ])('%s', (_n, gpus, cpu, expected) => expect(utilisationContribution(gpus, cpu)).toEqual(expected));
});

describe('averageUtilisation', () => {
  it.each([
    ['empty cluster', { nodes: 0, gpus: 0, gpuUtilMilli: 0, cpuUtilMilli: 0 }, { gpu: null, cpu: null }],
    ['CPU-only nodes', { nodes: 2, gpus: 0, gpuUtilMilli: 0, cpuUtilMilli: 700 }, { gpu: null, cpu: 0.35 }],
    ['GPUs weighted per GPU, CPU per node', { nodes: 2, gpus: 12, gpuUtilMilli: 6000, cpuUtilMilli: 1000 }, { gpu: 0.5, cpu: 0.5 }],
  ])('%s', (_n, sums, expected) => expect(averageUtilisation(sums)).toEqual(expected));
});
