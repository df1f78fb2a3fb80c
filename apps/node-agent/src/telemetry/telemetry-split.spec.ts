import { telemetryDue } from './telemetry-split';
import { NodeTelemetry } from './telemetry-source';

const gpu = { index: 0, model: 'H100', memoryMiB: 80000, memoryUsedMiB: 1000, utilization: 0.5, healthy: true };
const base: NodeTelemetry = {
  gpus: [gpu, { ...gpu, index: 1 }],
  cpu: { cores: 96, utilization: 0.4 },
  memory: { totalMiB: 1000000, usedMiB: 300000 },
};
const split = { every: 6, delta: 0.1 };
const withGpu = (i: number, g: Partial<typeof gpu>): NodeTelemetry => ({ ...base, gpus: base.gpus.map((x, j) => (j === i ? { ...x, ...g } : x)) });

describe('telemetryDue', () => {
  it.each<[string, NodeTelemetry | null, number, NodeTelemetry, boolean]>([
    ['first beat', null, 0, base, true],
    ['unchanged, soon after', base, 0, base, false],
    ['unchanged, one beat before the period ends', base, 4, base, false],
    ['unchanged, the every-th beat', base, 5, base, true],
    ['unchanged, long overdue', base, 50, base, true],
    ['small CPU drift', base, 1, { ...base, cpu: { cores: 96, utilization: 0.45 } }, false],
    ['CPU moved by delta', base, 1, { ...base, cpu: { cores: 96, utilization: 0.5 } }, true],
    ['CPU moved down by delta', base, 1, { ...base, cpu: { cores: 96, utilization: 0.3 } }, true],
    ['cores changed', base, 1, { ...base, cpu: { cores: 64, utilization: 0.4 } }, true],
    ['memory total changed', base, 1, { ...base, memory: { totalMiB: 500000, usedMiB: 300000 } }, true],
    ['memory used moved a little', base, 1, { ...base, memory: { totalMiB: 1000000, usedMiB: 350000 } }, false],
    ['memory used moved by delta of total', base, 1, { ...base, memory: { totalMiB: 1000000, usedMiB: 400000 } }, true],
    ['a GPU lost', base, 1, { ...base, gpus: [gpu] }, true],
    ['a GPU turned unhealthy', base, 1, withGpu(1, { healthy: false }), true],
    ['a GPU model changed', base, 1, withGpu(0, { model: 'A100' }), true],
    ['GPU utilisation drift', base, 1, withGpu(1, { utilization: 0.55 }), false],
    ['GPU utilisation moved by delta', base, 1, withGpu(1, { utilization: 0.61 }), true],
    ['GPU memory used moved by delta of its memory', base, 1, withGpu(0, { memoryUsedMiB: 9000 }), true],
    ['GPU memory used drift', base, 1, withGpu(0, { memoryUsedMiB: 5000 }), false],
  ])('%s', (_name, last, since, now, due) => {
    expect(telemetryDue(last, since, now, split)).toBe(due);
  });

  it('every = 1 sends telemetry in every beat', () => {
    expect(telemetryDue(base, 0, base, { every: 1, delta: 0.1 })).toBe(true);
  });
});
