import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter } from 'prom-client';
import { KillCommand, TOPICS } from '@gantry/contracts';
import { decideAttemptLoss } from '@gantry/domain';
import {
  ConcurrentUpdateError, Leadership, OutboxMessage, Sql, appendJobEvents, appendNodeEvents, casUpdateJob, enqueueOutbox, findJob, finishNodeDrain,
  holdsLeadership, inTransaction, loadRanks, releaseRank,
} from '@gantry/persistence';
import type { WakeUpSender } from '@gantry/messaging';
import { SCHEDULER_WAKE } from '@gantry/runtime';

export type LossReason = 'NODE_LOST' | 'PHANTOM' | 'NODE_DRAINED';
/** Why a job's attempt was looked at without changing it (a RECONCILED event). */
export type NoteReason = 'NODE_PARTITION_HELD' | 'NODE_RETURNED';
export type LossOutcome = 'requeued' | 'failed' | 'ignored' | 'deposed';

const losses = new Counter({ name: 'gantry_attempts_lost_total', help: 'Attempts ended because their node died or they vanished from it', labelNames: ['reason', 'outcome'] });

/**
 * Ends an attempt the control plane has lost: every rank's capacity is released, live ranks on other
 * nodes of a gang get a KILL, and the job goes back to QUEUED (placed again as attempt + 1) while
 * retries remain, else FAILED. With a leadership, the write commits only if it is still held.
 */
@Injectable()
export class AttemptLossApplier {
  constructor(@Inject(DataSource) private readonly ds: DataSource, @Inject(SCHEDULER_WAKE) private readonly schedulerWake: WakeUpSender) {}

  async lose(jobId: string, attempt: number, lostNodeId: string, reason: LossReason, leadership: Leadership | null = null): Promise<LossOutcome> {
    const outcome = await this.retried(() => inTransaction(this.ds, async (sql): Promise<LossOutcome> => {
      if (leadership && !(await holdsLeadership(sql, leadership))) return 'deposed';
      return loseIn(sql, jobId, attempt, lostNodeId, reason);
    }));
    losses.inc({ reason, outcome });
    if (outcome === 'requeued' || outcome === 'failed') this.schedulerWake.signal('CAPACITY_RELEASED');
    return outcome;
  }

  /**
   * Ends every given attempt on a node declared dead and records the eviction on the node (the
   * jobs whose attempts it ended), in one transaction fenced by the leadership: a detector killed
   * half-way leaves both or neither, so its successor still sees the work and evicts it once.
   * Jobs are locked in id order so two evictions cannot wait on each other in a cycle.
   */
  async evict(
    nodeId: string, ranks: ReadonlyArray<{ jobId: string; attempt: number }>, why: string, leadership: Leadership, at: Date,
  ): Promise<{ deposed: true } | { deposed: false; jobIds: string[] }> {
    const ordered = [...ranks].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.attempt - b.attempt));
    const result = await this.retried(() => inTransaction(this.ds, async (sql) => {
      if (!(await holdsLeadership(sql, leadership))) return { deposed: true as const };
      const ended: Array<{ jobId: string; outcome: LossOutcome }> = [];
      for (const r of ordered) ended.push({ jobId: r.jobId, outcome: await loseIn(sql, r.jobId, r.attempt, nodeId, 'NODE_LOST') });
      const jobIds = ended.filter((e) => e.outcome !== 'ignored').map((e) => e.jobId);
      await appendNodeEvents(sql, [{ nodeId, type: 'EVICTED', at, toHealth: 'UNHEALTHY', reason: why, jobIds }], leadership.epoch);
      return { deposed: false as const, jobIds, ended };
    }));
    if (result.deposed) return result;
    for (const e of result.ended) losses.inc({ reason: 'NODE_LOST', outcome: e.outcome });
    if (result.jobIds.length > 0) this.schedulerWake.signal('CAPACITY_RELEASED');
    return { deposed: false, jobIds: result.jobIds };
  }

  /**
   * Ends every attempt still on a node whose drain is due: each job goes back to QUEUED (reason
   * NODE_DRAINED, no retry used), every rank gets a KILL (the drained node's too: it is alive) and
   * gives its capacity back, the node gets a DRAINED event naming the jobs, and the drain is over;
   * all in one transaction fenced by the leadership, jobs locked in id order.
   */
  async drain(
    nodeId: string, ranks: ReadonlyArray<{ jobId: string; attempt: number }>, leadership: Leadership, at: Date,
  ): Promise<{ deposed: true } | { deposed: false; jobIds: string[] }> {
    const ordered = [...ranks].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.attempt - b.attempt));
    const result = await this.retried(() => inTransaction(this.ds, async (sql) => {
      if (!(await holdsLeadership(sql, leadership))) return { deposed: true as const };
      const ended: Array<{ jobId: string; outcome: LossOutcome }> = [];
      for (const r of ordered) ended.push({ jobId: r.jobId, outcome: await loseIn(sql, r.jobId, r.attempt, nodeId, 'NODE_DRAINED') });
      const jobIds = ended.filter((e) => e.outcome !== 'ignored').map((e) => e.jobId);
      await appendNodeEvents(sql, [{ nodeId, type: 'DRAINED', at, reason: 'NODE_DRAINED', jobIds }], leadership.epoch);
      await finishNodeDrain(sql, nodeId);
      return { deposed: false as const, jobIds, ended };
    }));
    if (result.deposed) return result;
    for (const e of result.ended) losses.inc({ reason: 'NODE_DRAINED', outcome: e.outcome });
    if (result.jobIds.length > 0) this.schedulerWake.signal('CAPACITY_RELEASED');
    return { deposed: false, jobIds: result.jobIds };
  }

  /**
   * Records on the job that the detector looked at its attempt and left it alone (its node is held
   * for a suspected partition, or came back from one): a RECONCILED event with the reason. Only for
   * the current attempt of a live job; with a leadership, only while it is still held.
   */
  async note(jobId: string, attempt: number, nodeId: string, reason: NoteReason, leadership: Leadership | null = null): Promise<'noted' | 'ignored' | 'deposed'> {
    return this.retried(() => inTransaction(this.ds, async (sql) => {
      if (leadership && !(await holdsLeadership(sql, leadership))) return 'deposed' as const;
      const job = await findJob(sql, jobId);
      if (!job || job.attempt !== attempt || (job.state !== 'SCHEDULED' && job.state !== 'RUNNING')) return 'ignored' as const;
      const now = new Date();
      const { firstSeq } = await casUpdateJob(sql, jobId, job.version, {}, 1, now);
      await appendJobEvents(sql, jobId, firstSeq, [{ type: 'RECONCILED', at: now, attempt, nodeIds: [nodeId], reason }]);
      return 'noted' as const;
    }));
  }

  /** Runs a transaction again when a concurrent writer moved a job on (version CAS) or Postgres broke a deadlock. */
  private async retried<T>(run: () => Promise<T>): Promise<T> {
    for (let tries = 0; ; tries++) {
      try {
        return await run();
      } catch (e) {
        const retryable = e instanceof ConcurrentUpdateError || (e as { code?: string }).code === DEADLOCK_DETECTED;
        if (!retryable || tries >= 10) throw e;
      }
    }
  }
}

/** Postgres SQLSTATE for a deadlock it detected and broke by aborting this transaction. */
const DEADLOCK_DETECTED = '40P01';

/** The loss of one attempt, inside the caller's transaction (see AttemptLossApplier.lose). */
async function loseIn(sql: Sql, jobId: string, attempt: number, lostNodeId: string, reason: LossReason): Promise<LossOutcome> {
  const job = await findJob(sql, jobId);
  if (!job) return 'ignored';
  const drained = reason === 'NODE_DRAINED';
  // An attempt already stopping for a preemptor uses no retry, whatever ends it (ADR 0026).
  const forgiven = drained || job.preemptedAttempt === attempt;
  const decision = decideAttemptLoss(job, attempt, forgiven ? 'drained' : 'lost');
  if (decision.kind === 'ignore') return 'ignored';
  const now = new Date();
  // The job first, then its ranks: every writer locks in that order (the report path too), so none waits on another in a cycle.
  const to = decision.kind === 'requeue' ? 'QUEUED' : 'FAILED';
  const { firstSeq } = await casUpdateJob(
    sql, jobId, job.version,
    to === 'QUEUED'
      ? { state: 'QUEUED', nodeIds: [], pendingReason: null, preemptedAttempt: null, preemptedFor: null, ...(forgiven ? { retriesForgiven: job.retriesForgiven + 1 } : {}) }
      : { state: 'FAILED', finishedAt: now, reason, preemptedAttempt: null, preemptedFor: null },
    1, now,
  );
  await appendJobEvents(sql, jobId, firstSeq, [{ type: 'STATE_CHANGED', at: now, fromState: job.state, toState: to, attempt, nodeIds: [lostNodeId], reason }]);
  const ranks = await loadRanks(sql, jobId, attempt);
  const outbox: OutboxMessage[] = [];
  for (const r of ranks) {
    if (r.released) continue;
    await releaseRank(sql, jobId, attempt, r.nodeId, now);
    // A lost node is gone; a drained one is alive and must stop the attempt too.
    if (r.nodeId !== lostNodeId || drained) {
      const kill: KillCommand = { type: 'KILL', nodeId: r.nodeId, jobId, attempt, issuedAt: now.getTime(), reason };
      outbox.push({ topic: TOPICS.agentCommands, key: r.nodeId, value: kill });
    }
  }
  await enqueueOutbox(sql, outbox);
  return to === 'QUEUED' ? 'requeued' : 'failed';
}
