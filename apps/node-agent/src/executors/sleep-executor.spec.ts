import { ExecutionResult, ExecutionSpec } from './executor';
import { SleepExecutor } from './sleep-executor';

const spec = (env: Record<string, string>): ExecutionSpec =>
  ({
    nodeId: 'n1',
    jobId: '00000000-0000-4000-8000-000000000001',
    attempt: 1,
    image: 'i',
    command: ['x'],
    env,
    gang: { size: 1, rank: 0, nodeIds: ['n1'] },
  }) as ExecutionSpec;

describe('SleepExecutor', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it.each<[string, Record<string, string>, number | undefined, number, string]>([
    ['stops at once by default', {}, undefined, 0, 'SIGTERM'],
    ['takes SIM_STOP_MS to stop within the grace', { SIM_STOP_MS: '500' }, 1000, 500, 'SIGTERM'],
    ["is killed at the stop's grace when slower", { SIM_STOP_MS: '5000' }, 1000, 1000, 'SIGKILL'],
    ["is killed at the agent's grace when the stop gives none", { SIM_STOP_MS: '50000' }, undefined, 2000, 'SIGKILL'],
  ])('%s', (_name, env, graceMs, endsAfterMs, signal) => {
    const ends: ExecutionResult[] = [];
    const execution = new SleepExecutor(2000).start(spec({ SIM_DURATION_MS: '60000', ...env }), (r) => ends.push(r));
    execution.stop('PREEMPTED', graceMs);
    if (endsAfterMs > 0) {
      jest.advanceTimersByTime(endsAfterMs - 1);
      expect(ends).toHaveLength(0);
      jest.advanceTimersByTime(1);
    }
    expect(ends).toEqual([{ exitCode: null, signal, stoppedFor: 'PREEMPTED' }]);
  });
});
