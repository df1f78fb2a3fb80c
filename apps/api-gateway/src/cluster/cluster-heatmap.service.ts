import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { ClusterHeatmapView } from '@gantry/contracts';
import { NodeLiveStore, autocommit, loadNodeGrid } from '@gantry/persistence';
import { CONFIG, REDIS } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { buildHeatmap } from './cluster-heatmap.builder';
import { RefreshingValue } from './refreshing-value';

/** How old an answer may be: every console polls, and one read per second serves them all. */
const MAX_AGE_MS = 1000;

/**
 * GET /v1/cluster/heatmap: the whole fleet in one compact answer, so that a console draws 50,000
 * nodes without paging through /v1/nodes. Per read: one scan of the nodes table (only the columns
 * drawn), then the last-seen scores and utilisation contributions from Redis in pipelines. Reads
 * are shared: callers within MAX_AGE_MS of the last read get it, and concurrent callers wait on
 * the same read rather than starting their own.
 */
@Injectable()
export class ClusterHeatmapService {
  private readonly live: NodeLiveStore;
  private readonly view: RefreshingValue<ClusterHeatmapView>;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: GatewayEnv,
  ) {
    this.live = new NodeLiveStore(redis, config.GANTRY_NODE_DEAD_MS * 3);
    this.view = new RefreshingValue(() => this.read(), MAX_AGE_MS, Date.now, true);
  }

  heatmap(): Promise<ClusterHeatmapView> {
    return this.view.get();
  }

  private async read(): Promise<ClusterHeatmapView> {
    const grid = await loadNodeGrid(autocommit(this.ds));
    const ids = grid.map((r) => r.id);
    const [lastSeen, contributions] = await Promise.all([this.live.lastSeenMany(ids), this.live.contributionsMany(ids)]);
    const thresholds = { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS };
    return buildHeatmap(
      grid,
      ids.map((id) => lastSeen.get(id) ?? null),
      contributions,
      Date.now(),
      thresholds,
    );
  }
}
