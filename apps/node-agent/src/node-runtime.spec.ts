import { AgentCommandMessage, JobReportMessage } from '@gantry/contracts';
import { Execution, ExecutionResult, Executor } from './executors/executor';
import { NodeRuntime } from './node-runtime';
import type { TraceHeaders } from '@gantry/messaging';
import { ReportSink } from './report-publisher';
import { TelemetrySource } from './telemetry/telemetry-source';
import { AttemptRecord, AttemptStore } from './state/attempt-record';

/** Records as JSON text, as on disk: what one runtime saved is what the next one loads. */
class DiskLikeStore implements AttemptStore {
  readonly files = new Map<string, string>();
  readonly writes: string[] = [];
  save(r: AttemptRecord): void {
    this.files.set(`${r.jobId}-${r.attempt}`, JSON.stringify(r));
    this.writes.push(`${r.jobId}-${r.attempt}:${r.final ? `${r.final.state}${r.finalSent ? '+sent' : ''}` : (r.stoppedFor ?? 'started')}`);
  }
  remove(r: Pick<AttemptRecord, 'jobId' | 'attempt'>): void {
    this.files.delete(`${r.jobId}-${r.attempt}`);
  }
  load(nodeId: string): AttemptRecord[] {
    return [...this.files.values()].map((t) => JSON.parse(t) as AttemptRecord).filter((r) => r.nodeId === nodeId);
  }
}

/** An executor whose attempts end when the test says so. */
class ManualExecutor implements Executor {
  readonly exits = new Map<string, (r: ExecutionResult) => void>();
  readonly started: string[] = [];
  readonly resumed: string[] = [];
  readonly stops: string[] = [];
  /** Whether a stop ends the attempt at once (false: the agent dies before it does). */
  stopEnds = true;
  start(spec: { jobId: string; attempt: number }, onExit: (r: ExecutionResult) => void): Execution {
    this.started.push(`${spec.jobId}#${spec.attempt}`);
    return this.watch(spec, onExit);
  }
  resume(ref: { jobId: string; attempt: number }, onExit: (r: ExecutionResult) => void): Execution {
    this.resumed.push(`${ref.jobId}#${ref.attempt}`);
    return this.watch(ref, onExit);
  }
  private watch(spec: { jobId: string; attempt: number }, onExit: (r: ExecutionResult) => void): Execution {
    this.exits.set(`${spec.jobId}#${spec.attempt}`, onExit);
    return {
      stop: (reason, graceMs) => {
        this.stops.push(`${spec.jobId}#${spec.attempt}:${reason}${graceMs === undefined ? '' : `/${graceMs}ms`}`);
        if (this.stopEnds) onExit({ exitCode: null, signal: 'SIGTERM', stoppedFor: reason });
      },
    };
  }
}

function node(address?: string, store?: AttemptStore) {
  const executor = new ManualExecutor();
  const published: Array<{ report: JobReportMessage; trace: TraceHeaders }> = [];
  let current: TraceHeaders = {};
  const telemetry = { read: async () => ({ gpus: [], cpu: { cores: 1, utilization: 0 }, memory: { totalMiB: 1, usedMiB: 0 } }) } as TelemetrySource;
  const acks: Array<() => void> = [];
  const sink: ReportSink = {
    publish: (report, trace, acked) => {
      published.push({ report, trace });
      if (acked) acks.push(acked);
    },
    traceHeaders: () => current,
  };
  const runtime = new NodeRuntime({ nodeId: 'n1', zone: 'z', rack: 'r', address }, executor, telemetry, sink, undefined, store);
  return { runtime, executor, published, setTrace: (t: TraceHeaders) => (current = t), ackAll: () => acks.splice(0).forEach((a) => a()) };
}

const run = (jobId: string, attempt = 1): AgentCommandMessage => ({
  type: 'RUN',
  nodeId: 'n1',
  jobId,
  attempt,
  issuedAt: 1,
  image: 'i',
  command: ['true'],
  env: {},
  resources: { gpus: 1, cpuCores: 1, memoryMiB: 1 },
  gang: { size: 1, rank: 0, nodeIds: ['n1'] },
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

  it("passes a KILL's grace to the stop (a preemption's), and none when the KILL gives none", () => {
    const { runtime, executor, published } = node();
    runtime.handle(run('a'));
    runtime.handle(run('b'));
    runtime.handle({ ...kill('a'), reason: 'PREEMPTED', graceMs: 1500 } as AgentCommandMessage);
    runtime.handle(kill('b'));
    expect(executor.stops).toEqual(['a#1:PREEMPTED/1500ms', 'b#1:CANCELLED_BY_USER']);
    expect(published.slice(2).map((p) => [p.report.jobId, p.report.state])).toEqual([
      ['a', 'CANCELLED'],
      ['b', 'CANCELLED'],
    ]);
  });

  it('ignores a repeated RUN of a live attempt and a KILL of an unknown one', () => {
    const { runtime, published } = node();
    runtime.handle(run('a'));
    runtime.handle(run('a'));
    runtime.handle(kill('x'));
    expect(published.map((p) => p.report.state)).toEqual(['RUNNING']);
    expect(runtime.runningCount).toBe(1);
  });

  describe("a RUN onto devices a live attempt still holds (a retried gang's rank given back before it stopped)", () => {
    const onDevices = (jobId: string, gpuIndices: number[], attempt = 1) => ({ ...run(jobId, attempt), gpuIndices }) as AgentCommandMessage;
    const flush = () => new Promise((r) => setImmediate(r));

    it('waits until that attempt has ended and reported, then starts with the trace of its own RUN', async () => {
      const { runtime, executor, published, setTrace } = node();
      runtime.handle(onDevices('old', [0, 1]));
      setTrace({ traceparent: 'run-new' });
      runtime.handle(onDevices('new', [1, 2]));
      runtime.handle(onDevices('free', [3]));
      runtime.handle(onDevices('new', [1, 2])); // a repeat while it waits changes nothing
      expect(executor.started).toEqual(['old#1', 'free#1']);
      expect((await runtime.heartbeat(1)).running).toEqual([
        { jobId: 'old', attempt: 1 },
        { jobId: 'free', attempt: 1 },
      ]);
      setTrace({ traceparent: 'elsewhere' });
      runtime.handle(kill('old'));
      await flush();
      expect(executor.started).toEqual(['old#1', 'free#1', 'new#1']);
      expect(published.map((p) => [p.report.jobId, p.report.state, p.trace.traceparent])).toEqual([
        ['old', 'RUNNING', undefined],
        ['free', 'RUNNING', 'run-new'],
        ['old', 'CANCELLED', undefined],
        ['new', 'RUNNING', 'run-new'],
      ]);
    });

    it('a KILL of a waiting attempt ends it CANCELLED without it ever running; a repeated RUN re-sends that end', async () => {
      const { runtime, executor, published } = node();
      runtime.handle(onDevices('old', [0]));
      runtime.handle(onDevices('new', [0]));
      expect(runtime.changedBy(kill('new'))).toBe(true);
      runtime.handle(kill('new'));
      runtime.handle(onDevices('new', [0]));
      executor.exits.get('old#1')!({ exitCode: 0, signal: null, stoppedFor: null });
      await flush();
      expect(executor.started).toEqual(['old#1']);
      expect(published.map((p) => `${p.report.jobId}:${p.report.state}${p.report.reason ? `:${p.report.reason}` : ''}`)).toEqual([
        'old:RUNNING',
        'new:CANCELLED:CANCELLED_BY_USER',
        'new:CANCELLED:CANCELLED_BY_USER',
        'old:SUCCEEDED',
      ]);
    });

    it('starts waiting RUNs oldest first, each only once every device it names is free', async () => {
      const { runtime, executor } = node();
      runtime.handle(onDevices('a', [0]));
      runtime.handle(onDevices('b', [1]));
      runtime.handle(onDevices('c', [0, 1]));
      runtime.handle(onDevices('d', [0]));
      executor.exits.get('a#1')!({ exitCode: 0, signal: null, stoppedFor: null });
      await flush();
      expect(executor.started).toEqual(['a#1', 'b#1', 'd#1']); // c still waits for device 1
      executor.exits.get('b#1')!({ exitCode: 0, signal: null, stoppedFor: null });
      executor.exits.get('d#1')!({ exitCode: 0, signal: null, stoppedFor: null });
      await flush();
      expect(executor.started).toEqual(['a#1', 'b#1', 'd#1', 'c#1']);
    });
  });

  it('says where the node listens in every beat, and nothing when it does not know', async () => {
    expect((await node('10.0.0.7').runtime.heartbeat(1)).address).toBe('10.0.0.7');
    expect('address' in (await node().runtime.heartbeat(1))).toBe(false);
  });

  it("hands the executor the rank's devices and the gang's rendezvous from the RUN", () => {
    const { runtime, executor } = node();
    const started: unknown[] = [];
    const start = executor.start.bind(executor);
    executor.start = (spec, onExit) => (started.push(spec), start(spec, onExit));
    runtime.handle({
      ...run('a'),
      gpuIndices: [2, 3],
      gang: { size: 2, rank: 1, nodeIds: ['n0', 'n1'], masterAddr: '10.0.0.1', masterPort: 29502 },
    } as AgentCommandMessage);
    expect(started).toEqual([
      expect.objectContaining({
        nodeId: 'n1',
        gpuIndices: [2, 3],
        gang: { size: 2, rank: 1, nodeIds: ['n0', 'n1'], masterAddr: '10.0.0.1', masterPort: 29502 },
      }),
    ]);
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
        ['a', 'RUNNING', undefined],
        ['b', 'RUNNING', undefined],
        ['a', 'FAILED', 'DEADLINE_EXCEEDED'],
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
      expect(published.map((p) => [p.report.state, p.report.reason])).toEqual([
        ['RUNNING', undefined],
        ['SUCCEEDED', undefined],
      ]);
    } finally {
      jest.useRealTimers();
    }
  });

  describe('across an agent restart (its records, ADR 0020)', () => {
    const states = (published: Array<{ report: JobReportMessage }>) =>
      published.map((p) => `${p.report.jobId}:${p.report.state}${p.report.reason ? `:${p.report.reason}` : ''}`);

    it('saves the record before the process starts, its end before it is published, and the ack after', () => {
      const store = new DiskLikeStore();
      const { runtime, executor, ackAll } = node(undefined, store);
      const saveBeforeStart = jest.spyOn(store, 'save').mockImplementationOnce((r) => {
        expect(executor.started).toEqual([]);
        DiskLikeStore.prototype.save.call(store, r);
      });
      runtime.handle(run('a'));
      expect(saveBeforeStart).toHaveBeenCalled();
      executor.exits.get('a#1')!({ exitCode: 0, signal: null, stoppedFor: null });
      ackAll();
      expect(store.writes).toEqual(['a-1:started', 'a-1:SUCCEEDED', 'a-1:SUCCEEDED+sent']);
    });

    it('re-adopts what still runs: listed in the first beat, RUNNING re-sent, its end reported once, never started again', async () => {
      const store = new DiskLikeStore();
      const first = node(undefined, store);
      first.runtime.handle(run('a'));
      // kill -9: the first runtime is simply gone.
      const second = node(undefined, store);
      expect(second.runtime.recover()).toEqual({ adopted: 1, ended: 0, resent: 0 });
      expect((await second.runtime.heartbeat(1)).running).toEqual([{ jobId: 'a', attempt: 1 }]);
      second.runtime.handle(run('a')); // the control plane repeats the RUN
      expect([second.executor.started, second.executor.resumed]).toEqual([[], ['a#1']]);
      second.executor.exits.get('a#1')!({ exitCode: 0, signal: null, stoppedFor: null });
      second.runtime.handle(run('a'));
      expect(states(second.published)).toEqual(['a:RUNNING', 'a:SUCCEEDED', 'a:SUCCEEDED']);
      expect(second.executor.started).toEqual([]);
    });

    it('sends an end Kafka never acknowledged, once per restart, and not again once it was', () => {
      const store = new DiskLikeStore();
      const first = node(undefined, store);
      first.runtime.handle(run('a'));
      first.executor.exits.get('a#1')!({ exitCode: 3, signal: null, stoppedFor: null }); // published, never acknowledged
      const second = node(undefined, store);
      expect(second.runtime.recover()).toEqual({ adopted: 0, ended: 1, resent: 1 });
      expect(second.published.map((p) => [p.report.state, p.report.exitCode])).toEqual([['FAILED', 3]]);
      second.ackAll();
      const third = node(undefined, store);
      expect(third.runtime.recover()).toEqual({ adopted: 0, ended: 1, resent: 0 });
      third.runtime.handle(run('a')); // a late repeat: the end again, no run
      expect([states(third.published), third.executor.started, third.executor.resumed]).toEqual([['a:FAILED'], [], []]);
    });

    it("keeps a deadline from the attempt's start, not from the restart", () => {
      jest.useFakeTimers({ now: 1_000_000 });
      try {
        const store = new DiskLikeStore();
        const first = node(undefined, store);
        first.runtime.handle({ ...run('a'), maxRuntimeSeconds: 10 } as AgentCommandMessage);
        jest.advanceTimersByTime(7_000);
        const second = node(undefined, store);
        second.runtime.recover();
        jest.advanceTimersByTime(2_999);
        expect(second.runtime.runningCount).toBe(1);
        jest.advanceTimersByTime(1);
        expect(states(second.published)).toEqual(['a:RUNNING', 'a:FAILED:DEADLINE_EXCEEDED']);
      } finally {
        jest.useRealTimers();
      }
    });

    it('remembers a stop asked for before the restart: its end is reported as that stop', () => {
      const store = new DiskLikeStore();
      const first = node(undefined, store);
      first.runtime.handle(run('a'));
      first.runtime.handle(run('b'));
      first.executor.stopEnds = false; // dies before the stops take effect
      first.runtime.handle(kill('a'));
      first.runtime.stopAll('FENCED');
      const second = node(undefined, store);
      second.runtime.recover();
      second.executor.exits.get('a#1')!({ exitCode: null, signal: 'SIGTERM', stoppedFor: null });
      second.executor.exits.get('b#1')!({ exitCode: null, signal: 'SIGTERM', stoppedFor: null });
      expect(states(second.published)).toEqual(['a:RUNNING', 'b:RUNNING', 'a:CANCELLED:CANCELLED_BY_USER']);
      expect([...store.files.keys()]).toEqual(['a-1']); // a fenced attempt is forgotten, not reported
    });

    it.each<[string, string, Partial<ExecutionResult>]>([
      ['killed by the kernel for memory', 'FAILED:OOM_KILLED', { exitCode: null, signal: 'SIGKILL', reason: 'OOM_KILLED' }],
      ['refused: an image and no runtime', 'FAILED:IMAGE_UNSUPPORTED', { exitCode: null, signal: null, reason: 'IMAGE_UNSUPPORTED' }],
      ['ended while no agent watched, no status left', 'FAILED:EXIT_UNKNOWN', { exitCode: null, signal: null, reason: 'EXIT_UNKNOWN' }],
      ['a signal', 'FAILED:SIGNAL_SIGSEGV', { exitCode: null, signal: 'SIGSEGV' }],
    ])('reports an attempt %s as %s', (_n, expected, result) => {
      const { runtime, executor, published } = node();
      runtime.handle(run('a'));
      executor.exits.get('a#1')!({ exitCode: null, signal: null, stoppedFor: null, ...result });
      expect(states(published).at(-1)).toBe(`a:${expected}`);
    });
  });
});
