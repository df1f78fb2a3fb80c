import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter } from 'prom-client';
import { KillCommand, TOPICS } from '@gantry/contracts';
import { decideAttemptLoss, nodesToAvoid } from '@gantry/domain';
import {
  ConcurrentUpdateError,
  JobChanges,
  Leadership,
  OutboxMessage,
  Sql,
  appendJobEvents,
  appendNodeEvents,
  casUpdateJob,
  enqueueOutbox,
  findJob,
  finishNodeDrain,
  holdsLeadership,
  inTransaction,
  loadRanks,
  recordStartFailures,
  releaseQueueGpus,
  releaseRank,
} from '@gantry/persistence';
import type { WakeUpSender } from '@gantry/messaging';
import { CONFIG, SCHEDULER_WAKE } from '@gantry/runtime';
import { ReconcilerEnv } from './config';

export type LossReason = 'NODE_LOST' | 'PHANTOM' | 'NODE_DRAINED' | 'START_TIMEOUT';
/** Why a job's attempt was looked at without changing it (a RECONCILED event). */
export type NoteReason = 'NODE_PARTITION_HELD' | 'NODE_RETURNED';
export type LossOutcome = 'requeued' | 'failed' | 'ignored' | 'deposed';

const losses = new Counter({
  name: 'gantry_attempts_lost_total',
  help: 'Attempts ended because their node died, they vanished from it, it was drained or it did not start them in time',
  labelNames: ['reason', 'outcome'],
});
const startFailureCordons = new Counter({
  name: 'gantry_nodes_cordoned_for_start_failures_total',
  help: 'Nodes cordoned (reason START_FAILURES) after GANTRY_NODE_START_FAILURES start timeouts in a row (ADR 0035)',
});

/**
 * Ends an attempt the control plane has lost: every rank's capacity is released, live ranks on other
 * nodes of a gang get a KILL, and the job goes back to QUEUED (placed again as attempt + 1) while
 * retries remain, else FAILED. With a leadership, the write commits only if it is still held.
 */
@Injectable()
export class AttemptLossApplier {
  private readonly startFailureThreshold: number;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(SCHEDULER_WAKE) private readonly schedulerWake: WakeUpSender,
    @Inject(CONFIG) config: Pick<ReconcilerEnv, 'GANTRY_NODE_START_FAILURES'>,
  ) {
    this.startFailureThreshold = config.GANTRY_NODE_START_FAILURES;
  }

  /**
   * Ends one lost attempt. START_TIMEOUT (its node did not start it in time, ADR 0035) is the
   * node's failure, not the job's: no retry used, every rank killed (that node is alive), the job
   * avoids the nodes that did not start it, and each such node counts a start failure (cordoned
   * with reason START_FAILURES at GANTRY_NODE_START_FAILURES in a row), all in the one transaction.
   */
  async lose(jobId: string, attempt: number, lostNodeId: string, reason: LossReason, leadership: Leadership | null = null): Promise<LossOutcome> {
    let cordoned: string[] = [];
    const outcome = await this.retried(() =>
      inTransaction(this.ds, async (sql): Promise<LossOutcome> => {
        if (leadership && !(await holdsLeadership(sql, leadership))) return 'deposed';
        const ended = await loseIn(sql, jobId, attempt, lostNodeId, reason);
        cordoned = ended.startFailedOn.length > 0 ? await recordStartFailures(sql, ended.startFailedOn, this.startFailureThreshold, new Date()) : [];
        await releaseQueueGpus(sql, ended.freed);
        return ended.outcome;
      }),
    );
    losses.inc({ reason, outcome });
    startFailureCordons.inc(cordoned.length);
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
    nodeId: string,
    ranks: ReadonlyArray<{ jobId: string; attempt: number }>,
    why: string,
    leadership: Leadership,
    at: Date,
  ): Promise<{ deposed: true } | { deposed: false; jobIds: string[] }> {
    const ordered = [...ranks].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.attempt - b.attempt));
    const result = await this.retried(() =>
      inTransaction(this.ds, async (sql) => {
        if (!(await holdsLeadership(sql, leadership))) return { deposed: true as const };
        const ended: Array<{ jobId: string; outcome: LossOutcome }> = [];
        const freed: Array<{ queue: string; gpus: number }> = [];
        for (const r of ordered) {
          const lost = await loseIn(sql, r.jobId, r.attempt, nodeId, 'NODE_LOST');
          ended.push({ jobId: r.jobId, outcome: lost.outcome });
          freed.push(...lost.freed);
        }
        const jobIds = ended.filter((e) => e.outcome !== 'ignored').map((e) => e.jobId);
        await appendNodeEvents(sql, [{ nodeId, type: 'EVICTED', at, toHealth: 'UNHEALTHY', reason: why, jobIds }], leadership.epoch);
        await releaseQueueGpus(sql, freed);
        return { deposed: false as const, jobIds, ended };
      }),
    );
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
    nodeId: string,
    ranks: ReadonlyArray<{ jobId: string; attempt: number }>,
    leadership: Leadership,
    at: Date,
  ): Promise<{ deposed: true } | { deposed: false; jobIds: string[] }> {
    const ordered = [...ranks].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.attempt - b.attempt));
    const result = await this.retried(() =>
      inTransaction(this.ds, async (sql) => {
        if (!(await holdsLeadership(sql, leadership))) return { deposed: true as const };
        const ended: Array<{ jobId: string; outcome: LossOutcome }> = [];
        const freed: Array<{ queue: string; gpus: number }> = [];
        for (const r of ordered) {
          const lost = await loseIn(sql, r.jobId, r.attempt, nodeId, 'NODE_DRAINED');
          ended.push({ jobId: r.jobId, outcome: lost.outcome });
          freed.push(...lost.freed);
        }
        const jobIds = ended.filter((e) => e.outcome !== 'ignored').map((e) => e.jobId);
        await appendNodeEvents(sql, [{ nodeId, type: 'DRAINED', at, reason: 'NODE_DRAINED', jobIds }], leadership.epoch);
        await finishNodeDrain(sql, nodeId);
        await releaseQueueGpus(sql, freed);
        return { deposed: false as const, jobIds, ended };
      }),
    );
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
  async note(
    jobId: string,
    attempt: number,
    nodeId: string,
    reason: NoteReason,
    leadership: Leadership | null = null,
  ): Promise<'noted' | 'ignored' | 'deposed'> {
    return this.retried(() =>
      inTransaction(this.ds, async (sql) => {
        if (leadership && !(await holdsLeadership(sql, leadership))) return 'deposed' as const;
        const job = await findJob(sql, jobId);
        if (!job || job.attempt !== attempt || (job.state !== 'SCHEDULED' && job.state !== 'RUNNING')) return 'ignored' as const;
        const now = new Date();
        const { firstSeq } = await casUpdateJob(sql, jobId, job.version, {}, 1, now);
        await appendJobEvents(sql, jobId, firstSeq, [{ type: 'RECONCILED', at: now, attempt, nodeIds: [nodeId], reason }]);
        return 'noted' as const;
      }),
    );
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

/**
 * The loss of one attempt, inside the caller's transaction (see AttemptLossApplier.lose), the
 * nodes that had not started their ranks of it when it ended for START_TIMEOUT (none otherwise),
 * and the GPUs its released ranks give back to its queue: the caller takes them off the queue's
 * count last in its transaction (releaseQueueGpus, ADR 0039).
 */
async function loseIn(
  sql: Sql,
  jobId: string,
  attempt: number,
  lostNodeId: string,
  reason: LossReason,
): Promise<{ outcome: LossOutcome; startFailedOn: string[]; freed: Array<{ queue: string; gpus: number }> }> {
  const job = await findJob(sql, jobId);
  if (!job) return { outcome: 'ignored', startFailedOn: [], freed: [] };
  // Ended by the control plane's own choice (a drain) or because a node did not start it: the job
  // did nothing wrong, and that node is alive and must stop the attempt too.
  const notTheJobs = reason === 'NODE_DRAINED' || reason === 'START_TIMEOUT';
  // An attempt already stopping for a preemptor uses no retry, whatever ends it (ADR 0026).
  const forgiven = notTheJobs || job.preemptedAttempt === attempt;
  const decision = decideAttemptLoss(job, attempt, forgiven ? 'drained' : 'lost');
  if (decision.kind === 'ignore') return { outcome: 'ignored', startFailedOn: [], freed: [] };
  const now = new Date();
  const ranks = await loadRanks(sql, jobId, attempt);
  const startFailedOn = reason === 'START_TIMEOUT' ? ranks.filter((r) => !r.released && r.state === 'SCHEDULED').map((r) => r.nodeId) : [];
  // Judged from a beat; its RUNNING report may have been applied since (the job's version would
  // then have moved, and this is the retry): a rank that started is not a start failure.
  if (reason === 'START_TIMEOUT' && !startFailedOn.includes(lostNodeId)) return { outcome: 'ignored', startFailedOn: [], freed: [] };
  // The job first, then its ranks: every writer locks in that order (the report path too), so none waits on another in a cycle.
  const to = decision.kind === 'requeue' ? 'QUEUED' : 'FAILED';
  const changes: JobChanges =
    to === 'QUEUED'
      ? {
          state: 'QUEUED',
          nodeIds: [],
          pendingReason: null,
          preemptedAttempt: null,
          preemptedFor: null,
          ...(forgiven ? { retriesForgiven: job.retriesForgiven + 1 } : {}),
          ...(startFailedOn.length > 0 ? { startFailedOn: nodesToAvoid(job.startFailedOn, startFailedOn) } : {}),
        }
      : { state: 'FAILED', finishedAt: now, reason, preemptedAttempt: null, preemptedFor: null };
  const { firstSeq } = await casUpdateJob(sql, jobId, job.version, changes, 1, now);
  await appendJobEvents(sql, jobId, firstSeq, [{ type: 'STATE_CHANGED', at: now, fromState: job.state, toState: to, attempt, nodeIds: [lostNodeId], reason }]);
  const outbox: OutboxMessage[] = [];
  let freedGpus = 0;
  for (const r of ranks) {
    if (r.released) continue;
    if (await releaseRank(sql, jobId, attempt, r.nodeId, now, reason)) freedGpus += job.gpus;
    // A lost node is gone; a drained one, or one that did not start its rank, is alive and must stop the attempt too.
    if (r.nodeId !== lostNodeId || notTheJobs) {
      const kill: KillCommand = { type: 'KILL', nodeId: r.nodeId, jobId, attempt, issuedAt: now.getTime(), reason };
      outbox.push({ topic: TOPICS.agentCommands, key: r.nodeId, value: kill });
    }
  }
  await enqueueOutbox(sql, outbox);
  return { outcome: to === 'QUEUED' ? 'requeued' : 'failed', startFailedOn, freed: [{ queue: job.queue, gpus: freedGpus }] };
}
