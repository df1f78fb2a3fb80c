import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { JobExplanationView } from '@gantry/contracts';
import { ExplainFairShare, ExplainJob, NO_STANDING, explainJob, fairShareHorizonSeconds, nodeHealth, ownerWeight, queueStanding } from '@gantry/domain';
import {
  JobRecord,
  NodeLiveStore,
  Sql,
  autocommit,
  listQueues,
  loadExplainRows,
  loadFairShareStandings,
  loadFairShareWaiting,
  nodeLiveStoreFor,
} from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG, REDIS } from '@gantry/runtime';
import { Principal } from '../auth/principal';
import { GatewayEnv } from '../config';
import { JobsService } from './jobs.service';

const asExplainJob = (j: JobRecord): ExplainJob => ({
  queue: j.queue,
  nodes: j.nodes,
  request: { gpus: j.gpus, gpuModel: j.gpuModel, cpuCores: j.cpuCores, memoryMiB: j.memoryMiB },
  pendingReason: j.pendingReason,
  depsPending: j.depsPending,
  notBeforeMs: j.notBefore?.getTime() ?? null,
  maxRuntimeSeconds: j.maxRuntimeSeconds,
});

/**
 * GET /v1/jobs/{id}/explain (ADR 0024): reads the snapshot (Postgres, and node liveness from
 * Redis as GET /v1/nodes does) and asks explainJob. Only a QUEUED job waits: any other is 409.
 */
@Injectable()
export class JobExplainService {
  private readonly live: NodeLiveStore;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    private readonly jobs: JobsService,
  ) {
    this.live = nodeLiveStoreFor(redis, config.GANTRY_NODE_DEAD_MS);
  }

  async explain(id: string, who: Principal): Promise<JobExplanationView> {
    const job = await this.jobs.get(id, who);
    // A parent is never placed (ADR 0025): what waits is its children.
    if (job.arraySize !== null)
      throw new ApiError(ErrorCode.CONFLICT, `job ${id} is an array's parent, which is never placed: explain its children (GET /v1/jobs?arrayOf=${id})`);
    if (job.state !== 'QUEUED') throw new ApiError(ErrorCode.CONFLICT, `job ${id} is ${job.state}: only a queued job waits`);
    const sql = autocommit(this.ds);
    const nowMs = Date.now();
    const [rows, fairShare] = await Promise.all([loadExplainRows(sql, job), this.fairShare(sql, job, nowMs)]);
    const lastSeen = await this.live.lastSeenMany(rows.nodes.map((n) => n.id));
    const thresholds = { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS };
    const e = explainJob({
      nowMs,
      job: asExplainJob(job),
      queues: rows.queues,
      nodes: rows.nodes.map((n) => ({ ...n, health: nodeHealth(lastSeen.get(n.id) ?? null, nowMs, thresholds) })),
      running: rows.running.map((r) => ({
        queue: r.queue,
        nodeIds: r.nodeIds,
        perNode: { gpus: r.gpus, cpuCores: r.cpuCores, memoryMiB: r.memoryMiB },
        startedAtMs: r.startedAt.getTime(),
        maxRuntimeSeconds: r.maxRuntimeSeconds,
      })),
      aheadInQueue: rows.aheadInQueue,
      aheadOverall: rows.aheadOverall,
      ahead: rows.ahead.map(asExplainJob),
      fairShare,
      backfill: this.config.GANTRY_SCHEDULER_BACKFILL,
    });
    return {
      pendingReason: e.pendingReason,
      position: e.position,
      blockers: e.blockers,
      wouldStartWith: e.wouldStartWith,
      estimatedStartAt: e.estimatedStartAtMs === null ? null : new Date(e.estimatedStartAtMs).toISOString(),
    };
  }

  /** The job's band and its queue's owners, with their decayed usage and GPUs held, as the scheduler orders them (ADR 0038). */
  private async fairShare(sql: Sql, job: JobRecord, nowMs: number): Promise<ExplainFairShare | undefined> {
    const halfLifeSeconds = this.config.GANTRY_FAIRSHARE_HALF_LIFE_HOURS * 3600;
    const [queues, standings, waiting] = await Promise.all([
      listQueues(sql),
      loadFairShareStandings(sql, nowMs, halfLifeSeconds),
      loadFairShareWaiting(sql, job.queue),
    ]);
    const mine = queues.find((q) => q.name === job.queue);
    if (!mine) return undefined;
    const input = { horizonSeconds: fairShareHorizonSeconds(halfLifeSeconds), usage: standings };
    const owners = new Set([...waiting.owners, ...(standings.get(job.queue)?.keys() ?? []), job.owner]);
    return {
      horizonSeconds: input.horizonSeconds,
      queues: queues
        .filter((q) => q.priority === mine.priority)
        .map((q) => ({ name: q.name, weight: q.weight, standing: queueStanding(input, q.name), waiting: waiting.queues.has(q.name) })),
      owner: job.owner,
      owners: [...owners].map((o) => ({
        name: o,
        weight: ownerWeight(mine.ownerWeights, o),
        standing: standings.get(job.queue)?.get(o) ?? NO_STANDING,
        waiting: waiting.owners.has(o),
      })),
    };
  }
}
