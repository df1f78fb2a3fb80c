import { AgentCommandMessage, JobReportMessage } from '@gantry/contracts';
import { Execution, ExecutionResult, Executor } from './executors/executor';
import { NodeRuntime } from './node-runtime';
import { ReportSink, TraceHeaders } from './report-publisher';
import { TelemetrySource } from './telemetry/telemetry-source';

/** An executor whose attempts end when the test says so. */
class ManualExecutor implements Executor {
  readonly exits = new Map<string, (r: ExecutionResult) => void>();
  start(spec: { jobId: string; attempt: number }, onExit: (r: ExecutionResult) => void): Execution {
    this.exits.set(`${spec.jobId}#${spec.attempt}`, onExit);
    return { stop: (reason) => onExit({ exitCode: null, signal: 'SIGTERM', stoppedFor: reason }) };
  }
}

function node(address?: string) {
  const executor = new ManualExecutor();
  const published: Array<{ report: JobReportMessage; trace: TraceHeaders }> = [];
  let current: TraceHeaders = {};
  const sink: ReportSink = { publish: (report, trace) => published.push({ report, trace }), traceHeaders: () => current };
  const telemetry = { read: async () => ({ gpus: [], cpu: { cores: 1, utilization: 0 }, memory: { totalMiB: 1, usedMiB: 0 } }) } as TelemetrySource;
  const runtime = new NodeRuntime({ nodeId: 'n1', zone: 'z', rack: 'r', address }, executor, telemetry, sink);
  return { runtime, executor, published, setTrace: (t: TraceHeaders) => (current = t) };
}

const run = (jobId: string, attempt = 1): AgentCommandMessage => ({
  type: 'RUN', nodeId: 'n1', jobId, attempt, issuedAt: 1, image: 'i', command: ['true'], env: {}, resources: { gpus: 1, cpuCores: 1, memoryMiB: 1 }, gang: { size: 1, rank: 0, nodeIds: ['n1'] },
});
const kill = (jobId: string, attempt = 1): AgentCommandMessage => ({ type: 'KILL', nodeId: 'n1', jobId, attempt, issuedAt: 1, reason: 'CANCELLED_BY_USER' });

describe('NodeRuntime', () => {
  it('says which commands change something: a new RUN, a KILL of a live attempt', () => {
    const { runtime, executor } = node();
    expect(runtime.changedBy(run('a'))).toBe(true);
    expect(runtime.changedBy(kill('a'))).toBe(false); // nothing to stop yet
    runtime.handle(run('a'));
    expect(runtime.changedBy(run('a'))).toBe(false); // live: a repeat
    expect(runtime.changedBy(run('a', 2))).toBe(true); // another attempt
    expect(runtime.changedBy(kill('a'))).toBe(true);
    executor.exits.get('a#1')!({ exitCode: 0, signal: null, stoppedFor: null });
    expect(runtime.changedBy(run('a'))).toBe(false); // finished: a repeat (re-sends the end)
    expect(runtime.changedBy(kill('a'))).toBe(false);
  });

  it('reports every state of an attempt with the trace context of the RUN that started it', () => {
    const { runtime, executor, published, setTrace } = node();
    setTrace({ traceparent: 'run-a' });
    runtime.handle(run('a'));
    setTrace({ traceparent: 'run-b' });
    runtime.handle(run('b'));
    setTrace({ traceparent: 'elsewhere' });
    executor.exits.get('a#1')!({ exitCode: 0, signal: null, stoppedFor: null });
    runtime.handle(kill('b'));
    runtime.handle(run('a')); // a repeat of a finished attempt re-sends its end
    expect(published.map((p) => [p.report.jobId, p.report.state, p.trace.traceparent])).toEqual([
      ['a', 'RUNNING', 'run-a'],
      ['b', 'RUNNING', 'run-b'],
      ['a', 'SUCCEEDED', 'run-a'],
      ['b', 'CANCELLED', 'run-b'],
      ['a', 'SUCCEEDED', 'run-a'],
    ]);
    expect(published[4].report).toBe(published[2].report);
  });

  it('ignores a repeated RUN of a live attempt and a KILL of an unknown one', () => {
    const { runtime, published } = node();
    runtime.handle(run('a'));
    runtime.handle(run('a'));
    runtime.handle(kill('x'));
    expect(published.map((p) => p.report.state)).toEqual(['RUNNING']);
    expect(runtime.runningCount).toBe(1);
  });

  it('says where the node listens in every beat, and nothing when it does not know', async () => {
    expect((await node('10.0.0.7').runtime.heartbeat(1)).address).toBe('10.0.0.7');
    expect('address' in (await node().runtime.heartbeat(1))).toBe(false);
  });

  it('hands the executor the rank\'s devices and the gang\'s rendezvous from the RUN', () => {
    const { runtime, executor } = node();
    const started: unknown[] = [];
    const start = executor.start.bind(executor);
    executor.start = (spec, onExit) => (started.push(spec), start(spec, onExit));
    runtime.handle({ ...run('a'), gpuIndices: [2, 3], gang: { size: 2, rank: 1, nodeIds: ['n0', 'n1'], masterAddr: '10.0.0.1', masterPort: 29502 } } as AgentCommandMessage);
    expect(started).toEqual([expect.objectContaining({ nodeId: 'n1', gpuIndices: [2, 3], gang: { size: 2, rank: 1, nodeIds: ['n0', 'n1'], masterAddr: '10.0.0.1', masterPort: 29502 } })]);
  });

  it('stops an attempt still running at its deadline and reports FAILED DEADLINE_EXCEEDED, once', () => {
    jest.useFakeTimers();
    try {
      const { runtime, published } = node();
      runtime.handle({ ...run('a'), maxRuntimeSeconds: 2 } as AgentCommandMessage);
      runtime.handle(run('b'));
      jest.advanceTimersByTime(1999);
      expect(runtime.runningCount).toBe(2);
      jest.advanceTimersByTime(1);
      expect(runtime.runningCount).toBe(1);
      expect(published.map((p) => [p.report.jobId, p.report.state, p.report.reason])).toEqual([
        ['a', 'RUNNING', undefined], ['b', 'RUNNING', undefined], ['a', 'FAILED', 'DEADLINE_EXCEEDED'],
      ]);
      jest.advanceTimersByTime(10_000);
      expect(published).toHaveLength(3);
    } finally {
      jest.useRealTimers();
    }
  });

  it('an attempt that ends before its deadline ends as it ended, and its deadline never fires', () => {
    jest.useFakeTimers();
    try {
      const { runtime, executor, published } = node();
      runtime.handle({ ...run('a'), maxRuntimeSeconds: 2 } as AgentCommandMessage);
      executor.exits.get('a#1')!({ exitCode: 0, signal: null, stoppedFor: null });
      jest.advanceTimersByTime(5_000);
      expect(published.map((p) => [p.report.state, p.report.reason])).toEqual([['RUNNING', undefined], ['SUCCEEDED', undefined]]);
    } finally {
      jest.useRealTimers();
    }
  });
});
