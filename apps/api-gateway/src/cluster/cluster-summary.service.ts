import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { ClusterSummaryView } from '@gantry/contracts';
import { JOB_STATES, averageUtilisation, healthBands } from '@gantry/domain';
import { ClusterUtilisationStore, GpuCapacityByModel, autocommit, gpuCapacityByModel } from '@gantry/persistence';
import { CONFIG, REDIS } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { RefreshingValue } from './refreshing-value';

/** Capacity and job counts change with placements, not beats; a second's staleness is the price of a constant-time summary. */
const DURABLE_MAX_AGE_MS = 1000;

interface DurableCounts {
  capacity: GpuCapacityByModel[];
  jobsByState: Record<string, number>;
}

/**
 * GET /v1/cluster/summary without touching per-node state (ADR 0006):
 * 1. health counts: two range counts over the last-seen index;
 * 2. utilisation: running sums the ingester keeps per beat;
 * 3. capacity by model and jobs by state: two GROUP BYs in Postgres, cached and refreshed in the background.
 */
@Injectable()
export class ClusterSummaryService {
  private readonly utilisation: ClusterUtilisationStore;
  private readonly durable: RefreshingValue<DurableCounts>;

  constructor(
    @Inject(DataSource) ds: DataSource,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: GatewayEnv,
  ) {
    this.utilisation = new ClusterUtilisationStore(redis);
    this.durable = new RefreshingValue(async () => {
      const sql = autocommit(ds);
      // Job counts belong with the job stores; the query is here only because this change may not touch them.
      const [capacity, jobRows] = await Promise.all([
        gpuCapacityByModel(sql),
        sql.rows<{ state: string; n: string }>(`SELECT state, count(*) AS n FROM jobs GROUP BY state`),
      ]);
      const jobsByState: Record<string, number> = Object.fromEntries(JOB_STATES.map((s) => [s, 0]));
      for (const r of jobRows) jobsByState[r.state] = Number(r.n);
      return { capacity, jobsByState };
    }, DURABLE_MAX_AGE_MS);
  }

  async summary(nowMs = Date.now()): Promise<ClusterSummaryView> {
    const bands = healthBands(nowMs, { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS });
    const [durable, healthy, degraded, sums] = await Promise.all([
      this.durable.get(),
      this.utilisation.countHeard(bands.healthy),
      this.utilisation.countHeard(bands.degraded),
      this.utilisation.totals(),
    ]);
    const registered = durable.capacity.reduce((n, c) => n + c.nodes, 0);
    // Registration may be up to a refresh old: never report a negative count.
    const unhealthy = Math.max(0, registered - healthy - degraded);
    const avg = averageUtilisation(sums);
    return {
      at: new Date(nowMs).toISOString(),
      nodes: healthy + degraded + unhealthy,
      nodesByHealth: { HEALTHY: healthy, DEGRADED: degraded, UNHEALTHY: unhealthy },
      gpus: durable.capacity
        .filter((c) => c.gpuModel !== null || c.total > 0)
        .map((c) => ({ model: c.gpuModel, nodes: c.nodes, total: c.total, allocated: c.allocated, free: c.free })),
      utilisation: { gpu: avg.gpu, cpu: avg.cpu, nodes: sums.nodes },
      jobsByState: durable.jobsByState,
    };
  }
}
