import { randomUUID } from 'node:crypto';
import { AgentCommandMessage, HeartbeatMessage, JobReportMessage, ReportedState } from '@gantry/contracts';
import { DeadlineTimer, startDeadline } from './deadline-timer';
import { Execution, ExecutionResult, Executor } from './executors/executor';
import { ReportSink, TraceHeaders } from './report-publisher';
import { TelemetrySplit, telemetryDue } from './telemetry/telemetry-split';
import { NodeTelemetry, TelemetrySource } from './telemetry/telemetry-source';

export interface NodeIdentity {
  nodeId: string;
  zone: string;
  rack: string;
  /** Where the node listens (heartbeats' `address`); a simulated node has none. */
  address?: string;
}

interface LiveAttempt {
  jobId: string;
  attempt: number;
  gpus: number;
  execution: Execution;
  /** Trace context of the RUN that started it; every report of the attempt carries it. */
  trace: TraceHeaders;
  /** Stops it after the RUN's maxRuntimeSeconds, counted from when this agent started it. */
  deadline: DeadlineTimer | null;
}

interface FinishedAttempt {
  report: JobReportMessage;
  trace: TraceHeaders;
}

const key = (jobId: string, attempt: number) => `${jobId}#${attempt}`;
const FINISHED_MEMORY = 1000;
/** Stops the agent makes on its own; they are not reported (see onExit). */
export const SILENT_STOPS = new Set(['FENCED', 'AGENT_STOPPED']);
/** The stop, and the FAILED report's reason, of an attempt still running at its maxRuntimeSeconds. */
export const DEADLINE_EXCEEDED = 'DEADLINE_EXCEEDED';

/**
 * One node as its agent sees it: what it runs, its heartbeats, and its answers to RUN/KILL.
 * An attempt whose RUN has maxRuntimeSeconds is stopped that long after this agent started it and
 * reported FAILED, reason DEADLINE_EXCEEDED.
 * Commands are level-triggered: a repeated RUN for a live or finished attempt is a no-op (a finished
 * one re-sends its final report, in case the first was lost); a KILL for an unknown attempt is a no-op.
 * An attempt's reports carry the trace context of the RUN that started it (ReportSink.traceHeaders
 * is read while that RUN is handled).
 */
export class NodeRuntime {
  readonly bootId = randomUUID();
  private seq = 0;
  private readonly live = new Map<string, LiveAttempt>();
  private readonly finished = new Map<string, FinishedAttempt>();
  private lastTelemetry: NodeTelemetry | null = null;
  private beatsSinceTelemetry = 0;

  constructor(
    readonly identity: NodeIdentity,
    private readonly executor: Executor,
    private readonly telemetry: TelemetrySource,
    private readonly reports: ReportSink,
    private readonly split: TelemetrySplit = { every: 1, delta: 0 },
  ) {}

  get runningCount(): number {
    return this.live.size;
  }

  busyGpus(): number {
    let n = 0;
    for (const a of this.live.values()) n += a.gpus;
    return n;
  }

  /** Whether handling `cmd` would change anything: a RUN of an attempt never seen, a KILL of a live one. */
  changedBy(cmd: AgentCommandMessage): boolean {
    const k = key(cmd.jobId, cmd.attempt);
    return cmd.type === 'KILL' ? this.live.has(k) : !this.live.has(k) && !this.finished.has(k);
  }

  handle(cmd: AgentCommandMessage): void {
    const k = key(cmd.jobId, cmd.attempt);
    if (cmd.type === 'KILL') {
      this.live.get(k)?.execution.stop(cmd.reason ?? 'KILLED');
      return;
    }
    if (this.live.has(k)) return;
    const done = this.finished.get(k);
    if (done) return this.reports.publish(done.report, done.trace);
    const trace = this.reports.traceHeaders();
    let execution: Execution;
    try {
      execution = this.executor.start(
        {
          nodeId: this.identity.nodeId, jobId: cmd.jobId, attempt: cmd.attempt, image: cmd.image!, command: cmd.command!,
          env: cmd.env ?? {}, gang: cmd.gang!, gpuIndices: cmd.gpuIndices,
        },
        (result) => this.onExit(cmd.jobId, cmd.attempt, trace, result),
      );
    } catch (err) {
      // A command the executor cannot even try (spawn refuses its arguments): the attempt fails
      // with the reason, once, instead of the command being retried forever.
      this.onExit(cmd.jobId, cmd.attempt, trace, { exitCode: null, signal: null, stoppedFor: null, error: (err as Error).message });
      return;
    }
    // The exit callback may already have run (spawn failure); only track what is still alive.
    if (!this.finished.has(k)) {
      const deadline = cmd.maxRuntimeSeconds ? startDeadline(cmd.maxRuntimeSeconds * 1000, () => execution.stop(DEADLINE_EXCEEDED)) : null;
      this.live.set(k, { jobId: cmd.jobId, attempt: cmd.attempt, gpus: cmd.resources?.gpus ?? 0, execution, trace, deadline });
      this.report(trace, cmd.jobId, cmd.attempt, 'RUNNING');
    }
  }

  private onExit(jobId: string, attempt: number, trace: TraceHeaders, r: ExecutionResult): void {
    const k = key(jobId, attempt);
    this.live.get(k)?.deadline?.cancel();
    this.live.delete(k);
    let state: ReportedState;
    let reason: string | undefined;
    if (r.stoppedFor && SILENT_STOPS.has(r.stoppedFor)) {
      // Cut off or shutting down: the control plane will judge the node lost and place the work
      // elsewhere. Reporting CANCELLED would end the job as if its owner had asked.
      return;
    } else if (r.stoppedFor === DEADLINE_EXCEEDED) {
      // Its own limit, not its owner's cancel: FAILED, which is never retried (only lost attempts are).
      state = 'FAILED';
      reason = DEADLINE_EXCEEDED;
    } else if (r.stoppedFor) {
      state = 'CANCELLED';
      reason = r.stoppedFor;
    } else if (r.error) {
      state = 'FAILED';
      reason = `SPAWN_FAILED: ${r.error}`;
    } else if (r.exitCode === 0) {
      state = 'SUCCEEDED';
    } else {
      state = 'FAILED';
      reason = r.exitCode === null ? `SIGNAL_${r.signal}` : undefined;
    }
    const report = this.report(trace, jobId, attempt, state, r.exitCode ?? undefined, reason);
    this.finished.set(k, { report, trace });
    if (this.finished.size > FINISHED_MEMORY) this.finished.delete(this.finished.keys().next().value!);
  }

  private report(trace: TraceHeaders, jobId: string, attempt: number, state: ReportedState, exitCode?: number, reason?: string): JobReportMessage {
    const report: JobReportMessage = { nodeId: this.identity.nodeId, jobId, attempt, state, at: Date.now() };
    if (exitCode !== undefined) report.exitCode = exitCode;
    if (reason !== undefined) report.reason = reason;
    this.reports.publish(report, trace);
    return report;
  }

  /** Stops every attempt: the agent believes it is cut off and its work will be placed elsewhere. */
  stopAll(reason: string): void {
    for (const a of this.live.values()) a.execution.stop(reason);
  }

  /** This node's next beat: liveness and the running set always, the telemetry when due (telemetry-split.ts). */
  async heartbeat(now = Date.now()): Promise<HeartbeatMessage> {
    const t = await this.telemetry.read();
    const beat: HeartbeatMessage = {
      nodeId: this.identity.nodeId,
      bootId: this.bootId,
      seq: ++this.seq,
      sentAt: now,
      zone: this.identity.zone,
      rack: this.identity.rack,
      ...(this.identity.address ? { address: this.identity.address } : {}),
      running: [...this.live.values()].map((a) => ({ jobId: a.jobId, attempt: a.attempt })),
    };
    if (!telemetryDue(this.lastTelemetry, this.beatsSinceTelemetry, t, this.split)) {
      this.beatsSinceTelemetry++;
      return beat;
    }
    this.lastTelemetry = t;
    this.beatsSinceTelemetry = 0;
    return { ...beat, gpus: t.gpus, cpu: t.cpu, memory: t.memory };
  }
}
