import { ReportedHardware, topologyOf, topologySignature } from './node-topology';

const gpu = (model: string, healthy = true) => ({ model, healthy });
const beat = (gpus: ReportedHardware['gpus']): ReportedHardware => ({ nodeId: 'n', zone: 'z', rack: 'r', gpus, cpu: { cores: 8 }, memory: { totalMiB: 64 } });

describe('topologyOf', () => {
  it.each<[string, ReportedHardware['gpus'], string | null, number]>([
    ['no GPUs', [], null, 0],
    ['uniform', [gpu('H100'), gpu('H100')], 'H100', 2],
    ['unhealthy GPUs are not capacity', [gpu('H100'), gpu('H100', false)], 'H100', 1],
    ['mixed models: the most common wins', [gpu('A100'), gpu('H100'), gpu('H100')], 'H100', 2],
    ['a tie: the first model by name', [gpu('H100'), gpu('A100')], 'A100', 1],
    ['unhealthy GPUs still decide the model', [gpu('A100', false), gpu('A100', false), gpu('H100')], 'A100', 0],
  ])('%s', (_n, gpus, model, total) => {
    const t = topologyOf(beat(gpus));
    expect([t.gpuModel, t.gpusTotal, t.cpuCores, t.memoryMiB]).toEqual([model, total, 8, 64]);
  });
});

describe('topologySignature', () => {
  const base = topologyOf(beat([gpu('H100')]));
  it.each<[string, Partial<typeof base>, boolean]>([
    ['the same topology', {}, true],
    ['another id only (the signature is per node)', { id: 'm' }, true],
    ['another rack', { rack: 'r2' }, false],
    ['a GPU fewer', { gpusTotal: 0 }, false],
    ['no model instead of an empty one', { gpuModel: null }, false],
    ['more memory', { memoryMiB: 65 }, false],
  ])('%s', (_n, over, same) => expect(topologySignature({ ...base, ...over }) === topologySignature(base)).toBe(same));
});
