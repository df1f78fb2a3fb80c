import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { CreateJobDto, DEFAULT_RESOURCES, JobLifecycleMessage, KillCommand, TOPICS, JOB_ID_PATTERN } from '@gantry/contracts';
import { assertTransition, decideCancel } from '@gantry/domain';
import { currentTraceHeaders } from '@gantry/messaging';
import {
  JobEventRecord, JobListFilter, JobRecord, appendJobEvents, autocommit, casUpdateJob, claimIdempotencyKey, enqueueOutbox,
  findJob, inTransaction, insertCreatedJob, listJobEvents, listJobsPage, loadRanks,
} from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG } from '@gantry/runtime';
import { Principal } from '../auth/principal';
import { GatewayEnv } from '../config';

export interface CreateResult {
  job: JobRecord;
  /** true when an earlier request with the same Idempotency-Key created the job. */
  replayed: boolean;
}

export interface CancelResult {
  job: JobRecord;
  /** false when the job was already terminal: 200 unchanged instead of 202. */
  accepted: boolean;
}

@Injectable()
export class JobsService {
  constructor(@Inject(DataSource) private readonly ds: DataSource, @Inject(CONFIG) private readonly config: GatewayEnv) {}

  /**
   * The job row, its CREATED event, its idempotency key and the outbox message that wakes the
   * scheduler: one transaction. With a key, (owner, key) is claimed first through the database's
   * primary key, so racing retries produce one job and every response names it.
   */
  async create(dto: CreateJobDto, who: Principal, idem: { key: string; bodySha256: string } | null): Promise<CreateResult> {
    const now = new Date();
    const trace = currentTraceHeaders();
    const resources = { ...DEFAULT_RESOURCES, ...dto.resources };
    const queue = dto.queue ?? 'default';
    const id = randomUUID();
    const outcome = await inTransaction(this.ds, async (sql): Promise<CreateResult | { mismatch: true }> => {
      if (idem) {
        const claim = await claimIdempotencyKey(sql, who.owner, idem.key, idem.bodySha256, id, now, this.config.GANTRY_IDEMPOTENCY_TTL_MS);
        if (claim.kind === 'existing') {
          if (claim.bodySha256 !== idem.bodySha256) return { mismatch: true };
          return { job: (await findJob(sql, claim.jobId))!, replayed: true };
        }
      }
      // The queue check, the job, its CREATED event and the outbox message: one statement.
      const msg: JobLifecycleMessage = { type: 'JOB_CREATED', jobId: id, at: now.getTime() };
      const job = await insertCreatedJob(sql, {
        id, owner: who.owner, queue, name: dto.name, image: dto.image,
        command: dto.command, env: dto.env ?? {}, labels: dto.labels ?? {},
        gpus: resources.gpus, gpuModel: resources.gpuModel ?? null, cpuCores: resources.cpuCores, memoryMiB: resources.memoryMiB,
        nodes: dto.nodes ?? 1, maxRetries: dto.maxRetries ?? 0, traceParent: trace.traceparent ?? null, createdAt: now,
      }, [{ topic: TOPICS.jobLifecycle, key: id, value: msg, headers: trace }]);
      if (!job) throw new ApiError(ErrorCode.UNPROCESSABLE, `queue ${queue} does not exist`, [{ field: 'queue', message: 'unknown queue' }]);
      return { job, replayed: false };
    });
    if ('mismatch' in outcome) {
      throw new ApiError(ErrorCode.UNPROCESSABLE, 'Idempotency-Key was already used with a different request body', [
        { field: 'Idempotency-Key', message: 'reused with a different body' },
      ]);
    }
    return outcome;
  }

  /** One page of the caller's (or, for operators, anyone's) jobs; see ListJobsQuery. */
  async list(filter: JobListFilter, after: { createdAt: Date; id: string } | null, limit: number): Promise<JobRecord[]> {
    return listJobsPage(autocommit(this.ds), filter, after, limit);
  }

  /** A job the caller may see, else 404 (others' jobs are invisible, not forbidden). */
  async get(id: string, who: Principal): Promise<JobRecord> {
    const job = JOB_ID_PATTERN.test(id) ? await findJob(autocommit(this.ds), id) : null;
    if (!job || (who.role !== 'operator' && job.owner !== who.owner)) {
      throw new ApiError(ErrorCode.NOT_FOUND, `job ${id} not found`);
    }
    return job;
  }

  async events(id: string, who: Principal, afterSeq: number, limit: number): Promise<JobEventRecord[]> {
    await this.get(id, who);
    return listJobEvents(autocommit(this.ds), id, afterSeq, limit);
  }

  /**
   * Cancellation is intent: a queued job ends at once; a dispatched one gets a KILL per live rank
   * and ends when its agent reports CANCELLED. Retried on a lost compare-and-set.
   */
  async cancel(id: string, who: Principal): Promise<CancelResult> {
    await this.get(id, who);
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        return await inTransaction(this.ds, (sql) => this.cancelOnce(sql, id));
      } catch (e) {
        if ((e as Error).name !== 'ConcurrentUpdateError') throw e;
      }
    }
    throw new ApiError(ErrorCode.CONFLICT, `job ${id} is changing too fast to cancel; retry`);
  }

  private async cancelOnce(sql: Parameters<Parameters<typeof inTransaction>[1]>[0], id: string): Promise<CancelResult> {
    const job = (await findJob(sql, id))!;
    const now = new Date();
    const decision = decideCancel(job.state, job.cancelRequested);
    switch (decision.kind) {
      case 'already-terminal':
        return { job, accepted: false };
      case 'already-requested':
        return { job, accepted: true };
      case 'cancel-now': {
        assertTransition(job.state, 'CANCELLED');
        const { firstSeq } = await casUpdateJob(sql, id, job.version, { cancelRequested: true, state: 'CANCELLED', finishedAt: now, pendingReason: null, reason: 'CANCELLED_BY_USER' }, 2, now);
        await appendJobEvents(sql, id, firstSeq, [
          { type: 'CANCEL_REQUESTED', at: now },
          { type: 'STATE_CHANGED', at: now, fromState: 'QUEUED', toState: 'CANCELLED', attempt: job.attempt, reason: 'CANCELLED_BY_USER' },
        ]);
        return { job: (await findJob(sql, id))!, accepted: true };
      }
      case 'request-kill': {
        const { firstSeq } = await casUpdateJob(sql, id, job.version, { cancelRequested: true }, 1, now);
        await appendJobEvents(sql, id, firstSeq, [{ type: 'CANCEL_REQUESTED', at: now, attempt: job.attempt }]);
        const live = (await loadRanks(sql, id, job.attempt)).filter((r) => !r.released);
        const kills: KillCommand[] = live.map((r) => ({ type: 'KILL', nodeId: r.nodeId, jobId: id, attempt: job.attempt, reason: 'CANCELLED_BY_USER' }));
        await enqueueOutbox(sql, kills.map((k) => ({ topic: TOPICS.agentCommands, key: k.nodeId, value: k, headers: currentTraceHeaders() })));
        return { job: (await findJob(sql, id))!, accepted: true };
      }
    }
  }
}
