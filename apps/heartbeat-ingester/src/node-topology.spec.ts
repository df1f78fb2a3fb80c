import { TelemetryBeat } from '@gantry/contracts';
import { topologyOf } from './node-topology';

const gpu = (model: string, healthy = true) => ({ index: 0, model, memoryMiB: 1, memoryUsedMiB: 0, utilization: 0, healthy });
const beat = (over: Partial<TelemetryBeat> = {}): TelemetryBeat =>
  ({ nodeId: 'n', bootId: 'b', seq: 1, sentAt: 10, zone: 'z', rack: 'r', gpus: [], cpu: { cores: 8, utilization: 0 }, memory: { totalMiB: 64, usedMiB: 0 }, running: [], ...over }) as TelemetryBeat;

describe('topologyOf', () => {
  it.each([
    ['no GPUs', [], null, 0],
    ['uniform', [gpu('H100'), gpu('H100')], 'H100', 2],
    ['unhealthy GPUs are not capacity', [gpu('H100'), gpu('H100', false)], 'H100', 1],
    ['mixed models: the most common wins', [gpu('A100'), gpu('H100'), gpu('H100')], 'H100', 2],
  ])('%s', (_n, gpus, model, total) => {
    const t = topologyOf(beat({ gpus: gpus as TelemetryBeat['gpus'] }));
    expect([t.gpuModel, t.gpusTotal, t.cpuCores, t.memoryMiB]).toEqual([model, total, 8, 64]);
  });
});
