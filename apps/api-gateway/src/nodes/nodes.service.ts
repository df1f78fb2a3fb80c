import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { InventoryPatchDto, NODE_ID_PATTERN, NodeEventView, NodeView } from '@gantry/contracts';
import { NodeHealth, nodeHealth, patchInventory } from '@gantry/domain';
import {
  NodeListFilter,
  NodeLiveStore,
  NodeRecord,
  autocommit,
  declareInventories,
  inTransaction,
  listNodeEvents,
  listNodesPage,
  loadNodes,
  lockPinnedInventory,
  nodeLiveStoreFor,
  removeNode,
  requestNodeDrain,
  setNodeCordoned,
} from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { WakeUpSender } from '@gantry/messaging';
import { CONFIG, REDIS, SCHEDULER_WAKE } from '@gantry/runtime';
import { AuditLog } from '../audit/audit-log';
import { Principal } from '../auth/principal';
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
    @Inject(SCHEDULER_WAKE) private readonly schedulerWake: WakeUpSender,
    private readonly audit: AuditLog,
  ) {
    this.live = nodeLiveStoreFor(redis, config.GANTRY_NODE_DEAD_MS);
  }

  private health(lastSeen: number | null, nowMs: number): NodeHealth {
    return nodeHealth(lastSeen, nowMs, { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS });
  }

  /** Node views as `who` may see them: a user sees no job ids (another owner's would leak). */
  private async views(rows: NodeRecord[], lastSeen: Map<string, number | null>, nowMs: number, who: Principal): Promise<NodeView[]> {
    const live = await this.live.liveMany(rows.map((r) => r.id));
    return rows.map((r) => {
      const view = toNodeView(r, this.health(lastSeen.get(r.id) ?? null, nowMs), lastSeen.get(r.id) ?? null, live.get(r.id));
      if (who.role !== 'operator' && view.telemetry) delete view.telemetry.running;
      return view;
    });
  }

  async get(id: string, who: Principal): Promise<NodeView> {
    const [node] = NODE_ID_PATTERN.test(id) ? await loadNodes(autocommit(this.ds), [id]) : [];
    if (!node) throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    return (await this.views([node], await this.live.lastSeenMany([id]), Date.now(), who))[0];
  }

  /**
   * Removes a node that holds no live attempt (409 otherwise): from Postgres (with its events and
   * recorded health; a tombstone tells the schedulers), then from Redis (its live state, last-seen
   * entry and share of the utilisation sums), so it counts nowhere. A node that beats again is
   * registered anew.
   */
  async remove(id: string, who: Principal): Promise<void> {
    const outcome = NODE_ID_PATTERN.test(id) ? await removeNode(this.ds, id, new Date()) : 'not-found';
    if (outcome === 'not-found') throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    if (outcome === 'busy') throw new ApiError(ErrorCode.CONFLICT, `node ${id} holds live attempts; drain it (cordon, then cancel or wait for its jobs) first`);
    await this.live.forget(id);
    await this.audit.record(who, 'nodes.delete', id);
  }

  /** The node's events after `afterId`; 404 for an unknown node. Job ids are for operators only. */
  async events(id: string, afterId: number, limit: number, who: Principal): Promise<NodeEventView[]> {
    const sql = autocommit(this.ds);
    const [node] = NODE_ID_PATTERN.test(id) ? await loadNodes(sql, [id]) : [];
    if (!node) throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    const rows = await listNodeEvents(sql, id, afterId, limit);
    return rows.map((e) => ({
      id: e.id,
      type: e.type,
      at: e.at.toISOString(),
      ...(e.fromHealth ? { fromHealth: e.fromHealth } : {}),
      ...(e.toHealth ? { toHealth: e.toHealth } : {}),
      ...(e.reason ? { reason: e.reason } : {}),
      ...(e.jobIds && who.role === 'operator' ? { jobIds: e.jobIds } : {}),
    }));
  }

  async setCordoned(id: string, cordoned: boolean, who: Principal): Promise<NodeView> {
    const node = NODE_ID_PATTERN.test(id) ? await setNodeCordoned(autocommit(this.ds), id, cordoned, new Date()) : null;
    if (!node) throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    // An uncordoned node is capacity the scheduler should use now, not at its next tick.
    if (!cordoned) this.schedulerWake.signal('CAPACITY_RELEASED');
    await this.audit.record(who, cordoned ? 'nodes.cordon' : 'nodes.uncordon', id);
    return (await this.views([node], await this.live.lastSeenMany([id]), Date.now(), who))[0];
  }

  /**
   * Changes the node's pinned inventory (contract §5.2, ADR 0035): the fields given replace the
   * pinned ones, and placement believes the lesser of the result and what the node reports from the
   * commit on (the node's version moves, so no plan made before can use the old capacity).
   */
  async update(id: string, patch: InventoryPatchDto, who: Principal): Promise<NodeView> {
    const now = new Date();
    // Refusals are answered after the transaction: it is rolled back by returning, not by throwing.
    const outcome = await inTransaction(this.ds, async (sql) => {
      const pinned = NODE_ID_PATTERN.test(id) ? await lockPinnedInventory(sql, id) : undefined;
      if (pinned === undefined) return { kind: 'not-enrolled' as const };
      if ((await loadNodes(sql, [id])).length === 0) return { kind: 'not-registered' as const };
      const next = patchInventory(pinned, patch);
      if ('missing' in next) return { kind: 'incomplete' as const, missing: next.missing };
      await declareInventories(sql, [{ nodeId: id, inventory: next.inventory }], now);
      return { kind: 'declared' as const, node: (await loadNodes(sql, [id]))[0], declared: next.inventory };
    });
    if (outcome.kind === 'not-enrolled') throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found (or not enrolled)`);
    if (outcome.kind === 'not-registered')
      throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} has not reported yet: enroll it again with an inventory instead`);
    if (outcome.kind === 'incomplete') {
      throw new ApiError(
        ErrorCode.VALIDATION_FAILED,
        `node ${id} has no pinned inventory yet: the patch must give ${outcome.missing.join(' and ')}`,
        outcome.missing.map((f) => ({ field: `declared.${f}`, message: 'required while nothing is pinned' })),
      );
    }
    // More capacity may be believed now: the scheduler should use it now, not at its next tick.
    this.schedulerWake.signal('CAPACITY_RELEASED');
    await this.audit.record(who, 'nodes.update', id, { declared: outcome.declared });
    return (await this.views([outcome.node], await this.live.lastSeenMany([id]), Date.now(), who))[0];
  }

  /** Cordons the node now and has the reconciler end what still runs there after the grace (contract §4.7). */
  async drain(id: string, gracePeriodSeconds: number, who: Principal): Promise<NodeView> {
    const now = new Date();
    const node = NODE_ID_PATTERN.test(id) ? await requestNodeDrain(autocommit(this.ds), id, new Date(now.getTime() + gracePeriodSeconds * 1000), now) : null;
    if (!node) throw new ApiError(ErrorCode.NOT_FOUND, `node ${id} not found`);
    await this.audit.record(who, 'nodes.drain', id, { gracePeriodSeconds });
    return (await this.views([node], await this.live.lastSeenMany([id]), Date.now(), who))[0];
  }

  /**
   * One page in id order. Topology filters run in Postgres; health is live state, so with a health
   * filter rows are read in chunks and filtered here, examining at most MAX_SCAN rows: a page may
   * then hold fewer than `limit` items and still have a next page.
   */
  async list(filter: NodeListFilter, health: NodeHealth | undefined, afterId: string | null, limit: number, who: Principal): Promise<NodeListing> {
    const sql = autocommit(this.ds);
    const nowMs = Date.now();
    if (!health) {
      const rows = await listNodesPage(sql, filter, afterId, limit + 1);
      const page = rows.slice(0, limit);
      const items = await this.views(page, await this.live.lastSeenMany(page.map((r) => r.id)), nowMs, who);
      return { items, continueAfter: rows.length > limit ? page[page.length - 1].id : null };
    }
    const matched: NodeRecord[] = [];
    const seen = new Map<string, number | null>();
    let after = afterId;
    for (let scanned = 0; scanned < MAX_SCAN;) {
      const rows = await listNodesPage(sql, filter, after, SCAN_CHUNK);
      scanned += rows.length;
      const lastSeen = await this.live.lastSeenMany(rows.map((r) => r.id));
      for (const r of rows) {
        after = r.id;
        if (this.health(lastSeen.get(r.id) ?? null, nowMs) !== health) continue;
        matched.push(r);
        seen.set(r.id, lastSeen.get(r.id) ?? null);
        if (matched.length === limit) return { items: await this.views(matched, seen, nowMs, who), continueAfter: after };
      }
      if (rows.length < SCAN_CHUNK) return { items: await this.views(matched, seen, nowMs, who), continueAfter: null };
    }
    return { items: await this.views(matched, seen, nowMs, who), continueAfter: after };
  }
}
