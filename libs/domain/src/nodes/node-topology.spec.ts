import { ReportedHardware, topologyOf, topologySignature } from './node-topology';

let nextIndex = 0;
const gpu = (model: string, healthy = true, index = nextIndex++) => ({ index, model, healthy });
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

  it.each<[string, ReportedHardware['gpus'], number[]]>([
    ['every healthy device, ascending', [gpu('H100', true, 3), gpu('H100', true, 0), gpu('H100', true, 1)], [0, 1, 3]],
    ['an unhealthy device is left out', [gpu('H100', true, 0), gpu('H100', false, 1), gpu('H100', true, 2)], [0, 2]],
    ['a device of another model is left out', [gpu('H100', true, 0), gpu('H100', true, 1), gpu('A100', true, 2)], [0, 1]],
    ['an index reported twice counts once', [gpu('H100', true, 4), gpu('H100', true, 4)], [4]],
    ['an index past 63 is not capacity (a RUN cannot name it)', [gpu('H100', true, 63), gpu('H100', true, 64)], [63]],
  ])('device indices: %s', (_n, gpus, indices) => {
    const t = topologyOf(beat(gpus));
    expect([t.gpuIndices, t.gpusTotal]).toEqual([indices, indices.length]);
  });

  it.each<[string, ReportedHardware['gpus'], number]>([
    ['every GPU healthy', [gpu('H100', true, 0), gpu('H100', true, 1)], 2],
    ['an unhealthy GPU is installed all the same', [gpu('H100', true, 0), gpu('H100', false, 1)], 2],
    ['a GPU of another model is not', [gpu('H100', true, 0), gpu('H100', true, 1), gpu('A100', true, 2)], 2],
    ['an index reported twice counts once', [gpu('H100', false, 4), gpu('H100', true, 4)], 1],
  ])('installed GPUs (what a first report pins): %s', (_n, gpus, installed) => {
    expect(topologyOf(beat(gpus)).gpusInstalled).toBe(installed);
  });

  it('keeps the address a beat gives, null without one', () => {
    expect(topologyOf({ ...beat([]), address: '10.0.0.7' }).address).toBe('10.0.0.7');
    expect(topologyOf(beat([])).address).toBeNull();
  });
});

describe('topologySignature', () => {
  const base = topologyOf(beat([gpu('H100')]));
  it.each<[string, Partial<typeof base>, boolean]>([
    ['the same topology', {}, true],
    ['another id only (the signature is per node)', { id: 'm' }, true],
    ['another rack', { rack: 'r2' }, false],
    ['a GPU fewer', { gpusTotal: 0 }, false],
    ['another device healthy', { gpuIndices: [5] }, false],
    ['another address', { address: '10.0.0.8' }, false],
    ['no model instead of an empty one', { gpuModel: null }, false],
    ['more memory', { memoryMiB: 65 }, false],
  ])('%s', (_n, over, same) => expect(topologySignature({ ...base, ...over }) === topologySignature(base)).toBe(same));
});
