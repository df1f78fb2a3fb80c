import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { JobExplanationView } from '@gantry/contracts';
import { ExplainJob, explainJob, nodeHealth } from '@gantry/domain';
import { JobRecord, NodeLiveStore, autocommit, loadExplainRows, nodeLiveStoreFor } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG, REDIS } from '@gantry/runtime';
import { Principal } from '../auth/principal';
import { GatewayEnv } from '../config';
import { JobsService } from './jobs.service';

const asExplainJob = (j: JobRecord): ExplainJob => ({
  queue: j.queue, nodes: j.nodes, request: { gpus: j.gpus, gpuModel: j.gpuModel, cpuCores: j.cpuCores, memoryMiB: j.memoryMiB },
  pendingReason: j.pendingReason, depsPending: j.depsPending, notBeforeMs: j.notBefore?.getTime() ?? null, maxRuntimeSeconds: j.maxRuntimeSeconds,
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
    if (job.arraySize !== null) throw new ApiError(ErrorCode.CONFLICT, `job ${id} is an array's parent, which is never placed: explain its children (GET /v1/jobs?arrayOf=${id})`);
    if (job.state !== 'QUEUED') throw new ApiError(ErrorCode.CONFLICT, `job ${id} is ${job.state}: only a queued job waits`);
    const rows = await loadExplainRows(autocommit(this.ds), job);
    const lastSeen = await this.live.lastSeenMany(rows.nodes.map((n) => n.id));
    const nowMs = Date.now();
    const thresholds = { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS };
    const e = explainJob({
      nowMs,
      job: asExplainJob(job),
      queues: rows.queues,
      nodes: rows.nodes.map((n) => ({ ...n, health: nodeHealth(lastSeen.get(n.id) ?? null, nowMs, thresholds) })),
      running: rows.running.map((r) => ({
        queue: r.queue, nodeIds: r.nodeIds, perNode: { gpus: r.gpus, cpuCores: r.cpuCores, memoryMiB: r.memoryMiB },
        startedAtMs: r.startedAt.getTime(), maxRuntimeSeconds: r.maxRuntimeSeconds,
      })),
      aheadInQueue: rows.aheadInQueue,
      aheadOverall: rows.aheadOverall,
      ahead: rows.ahead.map(asExplainJob),
    });
    return {
      pendingReason: e.pendingReason, position: e.position, blockers: e.blockers, wouldStartWith: e.wouldStartWith,
      estimatedStartAt: e.estimatedStartAtMs === null ? null : new Date(e.estimatedStartAtMs).toISOString(),
    };
  }
}
