import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter } from 'prom-client';
import { JobLifecycleMessage, KillCommand, TOPICS } from '@gantry/contracts';
import { decideAttemptLoss } from '@gantry/domain';
import {
  ConcurrentUpdateError, Leadership, OutboxMessage, appendJobEvents, casUpdateJob, enqueueOutbox, findJob, holdsLeadership,
  inTransaction, loadRanks, releaseRank,
} from '@gantry/persistence';

export type LossReason = 'NODE_LOST' | 'PHANTOM';
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
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  async lose(jobId: string, attempt: number, lostNodeId: string, reason: LossReason, leadership: Leadership | null = null): Promise<LossOutcome> {
    for (let tries = 0; ; tries++) {
      try {
        const outcome = await inTransaction(this.ds, async (sql): Promise<LossOutcome> => {
          if (leadership && !(await holdsLeadership(sql, leadership))) return 'deposed';
          const job = await findJob(sql, jobId);
          if (!job) return 'ignored';
          const decision = decideAttemptLoss(job, attempt);
          if (decision.kind === 'ignore') return 'ignored';
          const now = new Date();
          // The job first, then its ranks: every writer locks in that order (the report path too), so none waits on another in a cycle.
          const to = decision.kind === 'requeue' ? 'QUEUED' : 'FAILED';
          const { firstSeq } = await casUpdateJob(
            sql, jobId, job.version,
            to === 'QUEUED' ? { state: 'QUEUED', nodeIds: [], pendingReason: null } : { state: 'FAILED', finishedAt: now, reason },
            1, now,
          );
          await appendJobEvents(sql, jobId, firstSeq, [{ type: 'STATE_CHANGED', at: now, fromState: job.state, toState: to, attempt, nodeIds: [lostNodeId], reason }]);
          const ranks = await loadRanks(sql, jobId, attempt);
          const outbox: OutboxMessage[] = [];
          for (const r of ranks) {
            if (r.released) continue;
            await releaseRank(sql, jobId, attempt, r.nodeId, now);
            if (r.nodeId !== lostNodeId) {
              const kill: KillCommand = { type: 'KILL', nodeId: r.nodeId, jobId, attempt, reason };
              outbox.push({ topic: TOPICS.agentCommands, key: r.nodeId, value: kill });
            }
          }
          const wake: JobLifecycleMessage = { type: 'JOB_STATE_CHANGED', at: now.getTime() };
          outbox.push({ topic: TOPICS.jobLifecycle, key: jobId, value: wake });
          await enqueueOutbox(sql, outbox);
          return to === 'QUEUED' ? 'requeued' : 'failed';
        });
        losses.inc({ reason, outcome });
        return outcome;
      } catch (e) {
        if (!(e instanceof ConcurrentUpdateError) || tries >= 10) throw e;
      }
    }
  }

  /**
   * Records on the job that the detector looked at its attempt and left it alone (its node is held
   * for a suspected partition, or came back from one): a RECONCILED event with the reason. Only for
   * the current attempt of a live job; with a leadership, only while it is still held.
   */
  async note(jobId: string, attempt: number, nodeId: string, reason: NoteReason, leadership: Leadership | null = null): Promise<'noted' | 'ignored' | 'deposed'> {
    for (let tries = 0; ; tries++) {
      try {
        return await inTransaction(this.ds, async (sql) => {
          if (leadership && !(await holdsLeadership(sql, leadership))) return 'deposed';
          const job = await findJob(sql, jobId);
          if (!job || job.attempt !== attempt || (job.state !== 'SCHEDULED' && job.state !== 'RUNNING')) return 'ignored';
          const now = new Date();
          const { firstSeq } = await casUpdateJob(sql, jobId, job.version, {}, 1, now);
          await appendJobEvents(sql, jobId, firstSeq, [{ type: 'RECONCILED', at: now, attempt, nodeIds: [nodeId], reason }]);
          return 'noted';
        });
      } catch (e) {
        if (!(e instanceof ConcurrentUpdateError) || tries >= 10) throw e;
      }
    }
  }
}
