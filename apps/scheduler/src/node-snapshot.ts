import { ClusterCapacity, FitIndex, GangCandidates, HealthThresholds, PlacementNode, nodeHealth, schedulable } from '@gantry/domain';

/** Gang shapes no cycle asked for within this long are forgotten (each costs work per node change). */
const GANG_SHAPE_SWEEP_MS = 60_000;
const NOTHING_RESERVED: ReadonlySet<string> = new Set();
import { NodeChanges, NodeWriters, PagedReadOptions, Sql, WrittenNode, loadNodeWriters, loadNodesById, loadNodesChangedSince } from '@gantry/persistence';
import { BackgroundRead } from './background-read';

interface Entry {
  row: WrittenNode;
  /** The planner's view of the row, rebuilt when the row or its health changes. */
  node: PlacementNode | null;
  /** The view the fit index holds for this node (the previous `node` until the index catches up). */
  indexed: PlacementNode | null;
  /** When the node was last heard (kept from the liveness snapshot's changes). */
  heard: number | null;
  /** The last-heard time `node.health` was judged from, and until when that judgement holds. */
  judged: number | null;
  healthUntil: number;
  /** Its place in `entries` and in the array placementNodes() returns. */
  at: number;
  /** Its row or last-heard time changed since the last placementNodes(). */
  dirty: boolean;
}

const NO_CAPACITY: ClusterCapacity = { gpus: 0, cpuCores: 0, memoryMiB: 0 };

/**
 * The fleet as the planner sees it, kept between cycles: each refresh reads only the node rows
 * written since the last one (loadNodesChangedSince), not all 50,000, and each cycle looks again
 * only at the nodes whose row or last-heard time changed, or all of them once some node's health
 * judgement runs out (a node silent past a threshold). A stale row costs at most a lost race: the
 * commit's compare-and-set on each node's version is the guarantee (ADR 0003). Every node's last
 * writer is checked every `fullEveryMs` (beside the cycles, paced, see refresh), which bounds what
 * the change feed could miss; what that check finds different is read again (checkWriters).
 */
export class NodeSnapshot {
  private readonly byId = new Map<string, Entry>();
  private entries: Entry[] = [];
  /** What placementNodes() returns: entries[i].node at i, kept between calls. */
  private view: PlacementNode[] = [];
  /** Entries whose row or last-heard time changed since the last placementNodes(). */
  private dirty: Entry[] = [];
  /** Entries created since the last placementNodes(): their last-heard time is not looked up yet. */
  private unheard: Entry[] = [];
  /** The next placementNodes() looks at every node (after a full read, a removal, or new nodes). */
  private wholeFleet = true;
  /** The earliest moment some node's health judgement runs out: a pass over every node is due then. */
  private rejudgeAt = Number.NEGATIVE_INFINITY;
  /** The schedulable capacity of `view`, kept with it. */
  private capacityNow: ClusterCapacity = { ...NO_CAPACITY };
  private horizon: string | null = null;
  private fullAt = Number.NEGATIVE_INFINITY;
  /** The periodic check of every node's last writer while it runs beside the cycles. */
  private fullRead: BackgroundRead<NodeWriters> | null = null;
  /** Kept in step with the entries' views; rebuilt whole after a full read. */
  private index = new FitIndex([]);
  private gangs = new GangCandidates(this.index);
  private rebuildIndex = true;
  private sweptAt = 0;

  /** `fullPaging` paces the periodic check (not the first read, which the first cycle waits for). */
  constructor(
    private readonly fullEveryMs: number,
    private readonly fullPaging: PagedReadOptions = {},
  ) {}

  /**
   * Reads what changed; returns how many rows were read. The first read is of every row; after it,
   * the check due every `fullEveryMs` runs in the background (BackgroundRead): which transaction last
   * wrote each node, paced by `fullPaging`. The first refresh after it ends takes it in (checkWriters),
   * then reads the changes since its horizon, so the rows it brings are no older than a cycle.
   */
  async refresh(sql: Sql, nowMs: number): Promise<number> {
    if (this.horizon === null) {
      // Nothing to serve a cycle from before the first read ends.
      this.fullAt = nowMs;
      return this.apply(await loadNodesChangedSince(sql, null));
    }
    if (this.fullRead === null && nowMs - this.fullAt >= this.fullEveryMs) {
      this.fullAt = nowMs;
      this.fullRead = new BackgroundRead(loadNodeWriters(sql, this.fullPaging));
    }
    let read = 0;
    const full = this.fullRead?.settled();
    if (full) {
      this.fullRead = null;
      if (!full.ok) {
        this.fullAt = Number.NEGATIVE_INFINITY; // tried again at the next refresh
        throw full.error;
      }
      read += await this.checkWriters(sql, full.value);
    }
    return read + this.apply(await loadNodesChangedSince(sql, this.horizon));
  }

  /**
   * Takes in the periodic check: nodes whose last writer is not the one their row was read at are
   * read again, and nodes missing from it are dropped, unless their row was written after the check
   * began (then the check proves nothing about them). Nothing else is touched, so the cycle after it
   * costs what it found, not a rebuild of every node's view and of the fit index. What the change
   * feed brings can never differ here; the check bounds what a fault in it could hide.
   */
  private async checkWriters(sql: Sql, check: NodeWriters): Promise<number> {
    const stale = [...check.writers].filter(([id, xid]) => this.byId.get(id)?.row.changedXid !== xid).map(([id]) => id);
    const before = BigInt(check.horizon);
    const removed = [...this.byId.values()].filter((e) => !check.writers.has(e.row.id) && BigInt(e.row.changedXid) < before).map((e) => e.row.id);
    const rows = await loadNodesById(sql, stale);
    return this.apply({ horizon: check.horizon, nodes: rows, removed });
  }

  /** Takes in one read: the rows changed since the horizon (all of them at first), and the nodes removed. */
  private apply(changes: NodeChanges): number {
    for (const row of changes.nodes) {
      const entry = this.byId.get(row.id);
      if (entry) {
        entry.row = row;
        entry.node = null;
        this.markDirty(entry);
      } else {
        const created: Entry = {
          row,
          node: null,
          indexed: null,
          heard: null,
          judged: null,
          healthUntil: Number.NEGATIVE_INFINITY,
          at: this.entries.length,
          dirty: false,
        };
        this.unheard.push(created);
        this.byId.set(row.id, created);
        this.entries.push(created);
        this.wholeFleet = true;
      }
    }
    // A removed node (DELETE /v1/nodes/{id}) leaves the fleet; rare, so the index is simply rebuilt.
    const removed = new Set(changes.removed.filter((id) => this.byId.delete(id)));
    if (removed.size > 0) {
      this.entries = this.entries.filter((e) => !removed.has(e.row.id));
      this.unheard = this.unheard.filter((e) => !removed.has(e.row.id));
      this.rebuildIndex = true;
      this.wholeFleet = true;
    }
    this.horizon = changes.horizon;
    return changes.nodes.length + removed.size;
  }

  /**
   * Every node with its health now. Last-heard times are looked up only for nodes heard again
   * (the liveness snapshot's changes), and only those and the nodes whose rows changed are judged
   * again, unless some node's judgement has run out (a threshold passed): then every node is. So
   * a cycle costs its changes, not the fleet; the array is the same one each call, changed in
   * place, valid until the next call. Objects are reused while a node's row and health are
   * unchanged (the planner never mutates them). They are built field by field because spread
   * copies of the row made the planner's reads megamorphic, and slow (ADR 0012).
   */
  placementNodes(
    liveness: { lastHeard(id: string): number | null; takeChanges(): ReadonlySet<string> | 'all' },
    nowMs: number,
    t: HealthThresholds,
  ): PlacementNode[] {
    const changes = liveness.takeChanges();
    if (changes === 'all') {
      for (const e of this.entries) e.heard = liveness.lastHeard(e.row.id);
      this.wholeFleet = true;
    } else {
      for (const id of changes) {
        const e = this.byId.get(id);
        if (!e) continue;
        e.heard = liveness.lastHeard(id);
        this.markDirty(e);
      }
      for (const e of this.unheard) e.heard = liveness.lastHeard(e.row.id);
    }
    this.unheard = [];
    if (this.wholeFleet || nowMs >= this.rejudgeAt) {
      this.view = new Array<PlacementNode>(this.entries.length);
      this.capacityNow = { ...NO_CAPACITY };
      this.rejudgeAt = Number.POSITIVE_INFINITY;
      for (let i = 0; i < this.entries.length; i++) {
        const e = this.entries[i];
        e.at = i;
        e.dirty = false;
        this.judge(e, nowMs, t);
        this.view[i] = e.node!;
        this.count(e.node!, 1);
      }
      this.wholeFleet = false;
    } else {
      for (const e of this.dirty) {
        e.dirty = false;
        const before = this.view[e.at];
        this.judge(e, nowMs, t);
        if (before === e.node) continue;
        this.count(before, -1);
        this.count(e.node!, 1);
        this.view[e.at] = e.node!;
      }
    }
    this.dirty = [];
    if (this.rebuildIndex) {
      this.index = new FitIndex(this.view);
      this.gangs = new GangCandidates(this.index);
      this.rebuildIndex = false;
      for (const e of this.entries) e.indexed = e.node;
    }
    if (nowMs - this.sweptAt >= GANG_SHAPE_SWEEP_MS) {
      this.gangs.sweep();
      this.sweptAt = nowMs;
    }
    return this.view;
  }

  /** The schedulable capacity of the nodes placementNodes() last returned: what DRF shares are shares of (schedulableCapacity). */
  capacity(): ClusterCapacity {
    return this.capacityNow;
  }

  private markDirty(e: Entry): void {
    if (e.dirty) return;
    e.dirty = true;
    this.dirty.push(e);
  }

  /** Judges one node's health again if its row, its last-heard time or the clock calls for it, and keeps the fit index in step. */
  private judge(e: Entry, nowMs: number, t: HealthThresholds): void {
    if (e.node === null || e.heard !== e.judged || nowMs >= e.healthUntil) {
      const n = e.row;
      const health = nodeHealth(e.heard, nowMs, t);
      e.judged = e.heard;
      e.healthUntil =
        e.heard === null
          ? Number.POSITIVE_INFINITY
          : e.heard + (health === 'HEALTHY' ? t.suspectMs : health === 'DEGRADED' ? t.deadMs : Number.POSITIVE_INFINITY);
      if (e.node === null || e.node.health !== health) {
        e.node = {
          id: n.id,
          rack: n.rack,
          gpuModel: n.gpuModel,
          gpusTotal: n.gpusTotal,
          gpuIndices: n.gpuIndices,
          gpusHeld: n.gpusHeld,
          gpusAllocated: n.gpusAllocated,
          cpuCores: n.cpuCores,
          cpuAllocated: n.cpuAllocated,
          memoryMiB: n.memoryMiB,
          memoryAllocated: n.memoryAllocated,
          cordoned: n.cordoned,
          version: n.version,
          health,
        };
      }
    }
    if (e.healthUntil < this.rejudgeAt) this.rejudgeAt = e.healthUntil;
    if (!this.rebuildIndex && e.indexed !== e.node) {
      this.index.replace(e.indexed, e.node);
      this.gangs.changed(e.node!, NOTHING_RESERVED);
      e.indexed = e.node;
    }
  }

  /** Adds (sign 1) or takes away (-1) a node's part of the schedulable capacity. */
  private count(n: PlacementNode, sign: 1 | -1): void {
    if (!schedulable(n)) return;
    this.capacityNow.gpus += sign * n.gpusTotal;
    this.capacityNow.cpuCores += sign * n.cpuCores;
    this.capacityNow.memoryMiB += sign * n.memoryMiB;
  }

  /** The planner's fit index and gang candidates of the nodes placementNodes() last returned (see PlanOptions). */
  planIndexes(): { index: FitIndex; gangs: GangCandidates } {
    return { index: this.index, gangs: this.gangs };
  }

  /** The transaction that last wrote the node's row as read: what the ranks read beside it must match (NodeRunsSnapshot). */
  changedXid(id: string): string | undefined {
    return this.byId.get(id)?.row.changedXid;
  }

  /** The version of a node as the planner saw it (for the commit's compare-and-set). */
  version(id: string): number | undefined {
    return this.byId.get(id)?.row.version;
  }
}
