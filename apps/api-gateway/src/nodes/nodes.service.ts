import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { NODE_ID_PATTERN, NodeEventView, NodeView } from '@gantry/contracts';
import { NodeHealth, nodeHealth } from '@gantry/domain';
import { NodeListFilter, NodeLiveStore, NodeRecord, autocommit, nodeLiveStoreFor, listNodeEvents, listNodesPage, loadNodes, setNodeCordoned } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG, REDIS } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { toNodeView } from './node-view.mapper';

/** Rows examined per request when filtering on health, so a rare health costs a bounded request. */
const MAX_SCAN = 5000;
const SCAN_CHUNK = 1000;

export interface NodeListing {
  items: NodeView[];
  /** Id to continue after, or null when the listing is complete. */
  continueAfter: string | null;
}

@Injectable()
export class NodesService {
  private readonly live: NodeLiveStore;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: GatewayEnv,
  ) {
    this.live = nodeLiveStoreFor(redis, config.GANTRY_NODE_DEAD_MS);
  }

  private health(lastSeen: number | null, nowMs: number): NodeHealth {
    return nodeHealth(lastSeen, nowMs, { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS });
  }

  private async views(rows: NodeRecord[], lastSeen: Map<string, number | null>, nowMs: number): Promise<NodeView[]> {
    const live = await this.live.liveMany(rows.map((r) => r.id));
    return rows.map((r) => toNodeView(r, this.health(lastSeen.get(r.id) ?? null, nowMs), lastSeen.get(r.id) ?? null, live.get(r.id)));
  }

  async get(id: string): Promise<NodeView> {
    const [node] = NODE_ID_PATTERN.test(id) ? await loadNodes(autocommit(this.ds), [id]) : [];
    if (!node) throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    return (await this.views([node], await this.live.lastSeenMany([id]), Date.now()))[0];
  }

  /** The node's events after `afterId`; 404 for an unknown node. */
  async events(id: string, afterId: number, limit: number): Promise<NodeEventView[]> {
    const sql = autocommit(this.ds);
    const [node] = NODE_ID_PATTERN.test(id) ? await loadNodes(sql, [id]) : [];
    if (!node) throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    const rows = await listNodeEvents(sql, id, afterId, limit);
    return rows.map((e) => ({
      id: e.id, type: e.type, at: e.at.toISOString(),
      ...(e.fromHealth ? { fromHealth: e.fromHealth } : {}), ...(e.toHealth ? { toHealth: e.toHealth } : {}),
      ...(e.reason ? { reason: e.reason } : {}), ...(e.jobIds ? { jobIds: e.jobIds } : {}),
    }));
  }

  async setCordoned(id: string, cordoned: boolean): Promise<NodeView> {
    const node = NODE_ID_PATTERN.test(id) ? await setNodeCordoned(autocommit(this.ds), id, cordoned, new Date()) : null;
    if (!node) throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    return (await this.views([node], await this.live.lastSeenMany([id]), Date.now()))[0];
  }

  /**
   * One page in id order. Topology filters run in Postgres; health is live state, so with a health
   * filter rows are read in chunks and filtered here, examining at most MAX_SCAN rows: a page may
   * then hold fewer than `limit` items and still have a next page.
   */
  async list(filter: NodeListFilter, health: NodeHealth | undefined, afterId: string | null, limit: number): Promise<NodeListing> {
    const sql = autocommit(this.ds);
    const nowMs = Date.now();
    if (!health) {
      const rows = await listNodesPage(sql, filter, afterId, limit + 1);
      const page = rows.slice(0, limit);
      const items = await this.views(page, await this.live.lastSeenMany(page.map((r) => r.id)), nowMs);
      return { items, continueAfter: rows.length > limit ? page[page.length - 1].id : null };
    }
    const matched: NodeRecord[] = [];
    const seen = new Map<string, number | null>();
    let after = afterId;
    for (let scanned = 0; scanned < MAX_SCAN; ) {
      const rows = await listNodesPage(sql, filter, after, SCAN_CHUNK);
      scanned += rows.length;
      const lastSeen = await this.live.lastSeenMany(rows.map((r) => r.id));
      for (const r of rows) {
        after = r.id;
        if (this.health(lastSeen.get(r.id) ?? null, nowMs) !== health) continue;
        matched.push(r);
        seen.set(r.id, lastSeen.get(r.id) ?? null);
        if (matched.length === limit) return { items: await this.views(matched, seen, nowMs), continueAfter: after };
      }
      if (rows.length < SCAN_CHUNK) return { items: await this.views(matched, seen, nowMs), continueAfter: null };
    }
    return { items: await this.views(matched, seen, nowMs), continueAfter: after };
  }
}
