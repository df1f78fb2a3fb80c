import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { CreateJobDto, DEFAULT_RESOURCES, JobLifecycleMessage, KillCommand, TOPICS } from '@gantry/contracts';
import { decideCancel } from '@gantry/domain';
import { currentTraceHeaders } from '@gantry/messaging';
import {
  JobEventRecord, JobRecord, appendJobEvents, autocommit, casUpdateJob, enqueueOutbox, findJob, inTransaction,
  insertJob, listJobEvents, loadRanks,
} from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { Principal } from '../auth/principal';

export interface CancelResult {
  job: JobRecord;
  /** false when the job was already terminal: 200 unchanged instead of 202. */
  accepted: boolean;
}

@Injectable()
export class JobsService {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  /** The job row, its CREATED event and the outbox message that wakes the scheduler: one transaction. */
  async create(dto: CreateJobDto, who: Principal): Promise<JobRecord> {
    const now = new Date();
    const trace = currentTraceHeaders();
    const resources = { ...DEFAULT_RESOURCES, ...dto.resources };
    return inTransaction(this.ds, async (sql) => {
      const job = await insertJob(sql, {
        id: randomUUID(), owner: who.owner, queue: dto.queue ?? 'default', name: dto.name, image: dto.image,
        command: dto.command, env: dto.env ?? {}, labels: dto.labels ?? {},
        gpus: resources.gpus, gpuModel: resources.gpuModel ?? null, cpuCores: resources.cpuCores, memoryMiB: resources.memoryMiB,
        nodes: dto.nodes ?? 1, maxRetries: dto.maxRetries ?? 0, traceParent: trace.traceparent ?? null, createdAt: now,
      });
      await appendJobEvents(sql, job.id, 1, [{ type: 'CREATED', at: now, toState: 'QUEUED' }]);
      const msg: JobLifecycleMessage = { type: 'JOB_CREATED', jobId: job.id, at: now.getTime() };
      await enqueueOutbox(sql, [{ topic: TOPICS.jobLifecycle, key: job.id, value: msg, headers: trace }]);
      return job;
    });
  }

  /** A job the caller may see, else 404 (others' jobs are invisible, not forbidden). */
  async get(id: string, who: Principal): Promise<JobRecord> {
    const job = UUID.test(id) ? await findJob(autocommit(this.ds), id) : null;
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

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
