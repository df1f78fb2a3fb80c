import { randomUUID } from 'node:crypto';
import { ATTEMPT_END_REASONS, AgentCommandMessage, HeartbeatMessage, JobReportMessage, ReportedState, RunCommand } from '@gantry/contracts';
import { DeadlineTimer, startDeadline } from './deadline-timer';
import { Execution, ExecutionResult, Executor, UNKNOWN_OWNER } from './executors/executor';
import type { TraceHeaders } from '@gantry/messaging';
import { ReportSink } from './report-publisher';
import { AttemptRecord, AttemptStore, NoAttemptStore } from './state/attempt-record';
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
  record: AttemptRecord;
  execution: Execution;
  /** Stops it after the RUN's maxRuntimeSeconds, counted from when this agent started it (record.startedAt). */
  deadline: DeadlineTimer | null;
}

const key = (jobId: string, attempt: number) => `${jobId}#${attempt}`;
const FINISHED_MEMORY = 1000;
/** Stops the agent makes on its own; they are not reported (see onExit). */
export const SILENT_STOPS = new Set(['FENCED', 'AGENT_STOPPED']);
/** The stop, and the FAILED report's reason, of an attempt still running at its maxRuntimeSeconds. */
export const DEADLINE_EXCEEDED = ATTEMPT_END_REASONS.deadlineExceeded;

/**
 * One node as its agent sees it: what it runs, its heartbeats, and its answers to RUN/KILL.
 * An attempt whose RUN has maxRuntimeSeconds is stopped that long after this agent started it and
 * reported FAILED, reason DEADLINE_EXCEEDED.
 * Commands are level-triggered: a repeated RUN for a live or finished attempt is a no-op (a finished
 * one re-sends its final report, in case the first was lost); a KILL for an unknown attempt is a no-op.
 * A RUN whose GPU devices a live attempt still holds waits until that attempt has ended: the control
 * plane gives a retried or lost gang's other ranks' devices back when it sends their KILLs, before
 * their processes are gone, and two processes must never share a device. A KILL of a waiting
 * attempt ends it CANCELLED without it ever running.
 * An attempt's reports carry the trace context of the RUN that started it (ReportSink.traceHeaders
 * is read while that RUN is handled).
 *
 * What a restart must not forget is in the attempt's record (AttemptStore, ADR 0020), saved before
 * its process starts, when a stop is asked for, and when it ends (before the end is published; again
 * once Kafka acknowledged it). `recover` takes over the records an earlier process of this agent
 * left: it watches again what still runs, reports what ended meanwhile, and keeps the finished ones
 * so that a repeated RUN re-sends their end instead of running them again.
 */
export class NodeRuntime {
  readonly bootId = randomUUID();
  private seq = 0;
  private readonly live = new Map<string, LiveAttempt>();
  /** RUNs waiting for devices a live attempt holds, in arrival order. */
  private readonly waiting = new Map<string, { cmd: RunCommand; trace: TraceHeaders }>();
  /** Finished attempts, oldest first; each record holds its final report. */
  private readonly finished = new Map<string, AttemptRecord>();
  private lastTelemetry: NodeTelemetry | null = null;
  private beatsSinceTelemetry = 0;

  constructor(
    readonly identity: NodeIdentity,
    private readonly executor: Executor,
    private readonly telemetry: TelemetrySource,
    private readonly reports: ReportSink,
    private readonly split: TelemetrySplit = { every: 1, delta: 0 },
    private readonly store: AttemptStore = new NoAttemptStore(),
  ) {}

  get runningCount(): number {
    return this.live.size;
  }

  busyGpus(): number {
    let n = 0;
    for (const a of this.live.values()) n += a.record.gpus;
    return n;
  }

  /** Whether handling `cmd` would change anything: a RUN of an attempt never seen, a KILL of a live one. */
  changedBy(cmd: AgentCommandMessage): boolean {
    const k = key(cmd.jobId, cmd.attempt);
    return cmd.type === 'KILL' ? this.live.has(k) || this.waiting.has(k) : !this.live.has(k) && !this.waiting.has(k) && !this.finished.has(k);
  }

  /**
   * Takes over what an earlier process of this agent left in the state directory; called once,
   * before the node's first heartbeat (whose running set then already lists what still runs).
   * Unsent ends are sent; attempts still running are watched again, their RUNNING re-sent (a
   * report of the state a job holds changes nothing) and their deadlines re-armed from their start.
   */
  recover(now = Date.now()): { adopted: number; ended: number; resent: number } {
    const counts = { adopted: 0, ended: 0, resent: 0 };
    for (const rec of this.store.load(this.identity.nodeId)) {
      if (rec.final) {
        this.remember(rec);
        if (!rec.finalSent) {
          this.sendFinal(rec);
          counts.resent++;
        }
        continue;
      }
      if (!this.executor.resume) {
        this.store.remove(rec);
        continue;
      }
      const execution = this.executor.resume(rec, (r) => this.onExit(rec, r));
      this.track(rec, execution, now);
      this.report(rec, 'RUNNING');
      counts.adopted++;
    }
    counts.ended = this.finished.size;
    return counts;
  }

  handle(cmd: AgentCommandMessage): void {
    const k = key(cmd.jobId, cmd.attempt);
    if (cmd.type === 'KILL') {
      const live = this.live.get(k);
      if (live) this.stop(live, cmd.reason ?? 'KILLED', cmd.graceMs);
      const waiting = this.waiting.get(k);
      if (waiting) {
        this.waiting.delete(k);
        this.onExit(this.recordOf(waiting.cmd, waiting.trace), { exitCode: null, signal: null, stoppedFor: cmd.reason ?? 'KILLED' });
      }
      return;
    }
    if (this.live.has(k) || this.waiting.has(k)) return;
    const done = this.finished.get(k);
    if (done) return this.sendFinal(done);
    if (this.holdsAnyOf(cmd.gpuIndices)) {
      this.waiting.set(k, { cmd, trace: this.reports.traceHeaders() });
      return;
    }
    this.start(cmd, this.reports.traceHeaders());
  }

  private recordOf(cmd: RunCommand, trace: TraceHeaders): AttemptRecord {
    return {
      v: 1,
      nodeId: this.identity.nodeId,
      jobId: cmd.jobId,
      attempt: cmd.attempt,
      gpus: cmd.resources?.gpus ?? 0,
      ...(cmd.gpuIndices?.length ? { gpuIndices: cmd.gpuIndices } : {}),
      trace,
      startedAt: Date.now(),
      ...(cmd.maxRuntimeSeconds ? { maxRuntimeSeconds: cmd.maxRuntimeSeconds } : {}),
    };
  }

  /** Whether a live attempt holds any of these devices. */
  private holdsAnyOf(gpuIndices: number[] | undefined): boolean {
    if (!gpuIndices?.length) return false;
    for (const a of this.live.values()) if (a.record.gpuIndices?.some((i) => gpuIndices.includes(i))) return true;
    return false;
  }

  /** Starts the waiting RUNs whose devices are free now, oldest first. */
  private startWaiting(): void {
    for (const [k, { cmd, trace }] of this.waiting) {
      if (this.holdsAnyOf(cmd.gpuIndices)) continue;
      this.waiting.delete(k);
      this.start(cmd, trace);
    }
  }

  private start(cmd: RunCommand, trace: TraceHeaders): void {
    const k = key(cmd.jobId, cmd.attempt);
    const rec = this.recordOf(cmd, trace);
    // On disk before the process exists: an agent that dies a moment later still knows it started it.
    this.store.save(rec);
    let execution: Execution;
    try {
      execution = this.executor.start(
        {
          nodeId: this.identity.nodeId,
          jobId: cmd.jobId,
          attempt: cmd.attempt,
          image: cmd.image!,
          command: cmd.command!,
          env: cmd.env ?? {},
          gang: cmd.gang!,
          gpuIndices: cmd.gpuIndices,
          cpuCores: cmd.resources?.cpuCores,
          memoryMiB: cmd.resources?.memoryMiB,
          ...(cmd.arrayIndex !== undefined ? { arrayIndex: cmd.arrayIndex } : {}),
          owner: cmd.owner ?? UNKNOWN_OWNER,
          hostIpc: cmd.hostIpc === true,
        },
        (result) => this.onExit(rec, result),
      );
    } catch (err) {
      // A command the executor cannot even try (spawn refuses its arguments): the attempt fails
      // with the reason, once, instead of the command being retried forever.
      this.onExit(rec, { exitCode: null, signal: null, stoppedFor: null, error: (err as Error).message });
      return;
    }
    // The exit callback may already have run (spawn failure, a refused image); only track what is still alive.
    if (!this.finished.has(k)) {
      this.track(rec, execution, rec.startedAt);
      this.report(rec, 'RUNNING');
    }
  }

  private track(rec: AttemptRecord, execution: Execution, now: number): void {
    const live: LiveAttempt = { record: rec, execution, deadline: null };
    this.live.set(key(rec.jobId, rec.attempt), live);
    if (rec.maxRuntimeSeconds) {
      const left = rec.startedAt + rec.maxRuntimeSeconds * 1000 - now;
      live.deadline = startDeadline(left, () => this.stop(live, DEADLINE_EXCEEDED));
    }
  }

  /** Stops a live attempt; the first reason given is kept (on disk too) and decides its report. */
  private stop(live: LiveAttempt, reason: string, graceMs?: number): void {
    if (!live.record.stoppedFor) {
      live.record.stoppedFor = reason;
      this.store.save(live.record);
    }
    live.execution.stop(reason, graceMs);
  }

  private onExit(rec: AttemptRecord, r: ExecutionResult): void {
    const k = key(rec.jobId, rec.attempt);
    this.live.get(k)?.deadline?.cancel();
    const freed = this.live.delete(k) && !!rec.gpuIndices?.length;
    // After this end is recorded: a RUN started here must not race its report.
    if (freed && this.waiting.size > 0) queueMicrotask(() => this.startWaiting());
    const stoppedFor = r.stoppedFor ?? rec.stoppedFor ?? null;
    let state: ReportedState;
    let reason: string | undefined;
    if (stoppedFor && SILENT_STOPS.has(stoppedFor)) {
      // Cut off or shutting down: the control plane will judge the node lost and place the work
      // elsewhere. Reporting CANCELLED would end the job as if its owner had asked.
      this.store.remove(rec);
      return;
    } else if (stoppedFor === DEADLINE_EXCEEDED) {
      // Its own limit, not its owner's cancel: FAILED, which is never retried (only lost attempts are).
      state = 'FAILED';
      reason = DEADLINE_EXCEEDED;
    } else if (stoppedFor) {
      state = 'CANCELLED';
      reason = stoppedFor;
    } else if (r.reason) {
      state = 'FAILED';
      reason = r.reason;
    } else if (r.error) {
      state = 'FAILED';
      reason = `SPAWN_FAILED: ${r.error}`;
    } else if (r.exitCode === 0) {
      state = 'SUCCEEDED';
    } else {
      state = 'FAILED';
      reason = r.exitCode === null ? `SIGNAL_${r.signal}` : undefined;
    }
    const report: JobReportMessage = { nodeId: rec.nodeId, jobId: rec.jobId, attempt: rec.attempt, state, at: Date.now() };
    if (r.exitCode !== null && r.exitCode !== undefined) report.exitCode = r.exitCode;
    if (reason !== undefined) report.reason = reason;
    rec.final = report;
    rec.finalSent = false;
    // On disk before it is published: an agent that dies before Kafka acknowledges it sends it after its restart.
    this.store.save(rec);
    this.remember(rec);
    this.sendFinal(rec);
  }

  private remember(rec: AttemptRecord): void {
    this.finished.set(key(rec.jobId, rec.attempt), rec);
    if (this.finished.size > FINISHED_MEMORY) {
      const [oldestKey, oldest] = this.finished.entries().next().value!;
      this.finished.delete(oldestKey);
      this.store.remove(oldest);
    }
  }

  private sendFinal(rec: AttemptRecord): void {
    this.reports.publish(rec.final!, rec.trace, () => {
      // Not once it has been forgotten: that would write its record back.
      if (rec.finalSent || this.finished.get(key(rec.jobId, rec.attempt)) !== rec) return;
      rec.finalSent = true;
      this.store.save(rec);
    });
  }

  private report(rec: AttemptRecord, state: ReportedState): void {
    this.reports.publish({ nodeId: rec.nodeId, jobId: rec.jobId, attempt: rec.attempt, state, at: Date.now() }, rec.trace);
  }

  /** Stops every attempt: the agent believes it is cut off and its work will be placed elsewhere. */
  stopAll(reason: string): void {
    // What waits never started: the control plane places it again when it judges the node lost.
    this.waiting.clear();
    for (const a of this.live.values()) this.stop(a, reason);
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
      running: [...this.live.values()].map((a) => ({ jobId: a.record.jobId, attempt: a.record.attempt })),
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
