import type { NodeRunsLookup, RankRun } from '@gantry/domain';
import { NodeRuns, Sql, loadNodeRuns } from '@gantry/persistence';

/** A rank not started when read is counted as starting at each cycle's now; re-read this often so that drift stays small. */
const UNSTARTED_REREAD_MS = 1_000;

interface Entry extends NodeRuns {
  readAtMs: number;
  unstarted: boolean;
}

/**
 * The live ranks on the nodes the last reservation held, for runtime-aware backfill (ADR 0008). Only
 * those nodes are read (one gang's worth, not the fleet), and only when their row has been written
 * since (a placement or a release changes `changed_xid`), or a rank there had not started. An entry
 * counts only while it matches the node row the cycle plans from; a node without one is of unknown
 * end, so a new reservation is strict for the cycle that makes it and backfills from the next.
 */
export class NodeRunsSnapshot {
  private entries = new Map<string, Entry>();
  private wanted: readonly string[] = [];

  /** Reads the wanted nodes whose entry is missing, out of step with the node row (`xidOf`), or holds a rank not started a while ago. */
  async refresh(sql: Sql, nowMs: number, xidOf: (id: string) => string | undefined): Promise<number> {
    const stale = this.wanted.filter((id) => {
      const e = this.entries.get(id);
      return !e || e.changedXid !== xidOf(id) || (e.unstarted && nowMs - e.readAtMs >= UNSTARTED_REREAD_MS);
    });
    if (stale.length === 0) return 0;
    const read = await loadNodeRuns(sql, stale);
    for (const [id, runs] of read) this.entries.set(id, { ...runs, readAtMs: nowMs, unstarted: runs.ranks.some((r) => r.startedAtMs === null) });
    return stale.length;
  }

  /** What the planner sees: each node's ranks while they go with the row it plans from. */
  lookup(xidOf: (id: string) => string | undefined): NodeRunsLookup {
    return {
      get: (id: string): readonly RankRun[] | undefined => {
        const e = this.entries.get(id);
        return e && e.changedXid === xidOf(id) ? e.ranks : undefined;
      },
    };
  }

  /** The nodes this cycle's reservation holds (none: []): read for the next cycle; the rest are forgotten. */
  want(nodeIds: readonly string[]): void {
    this.wanted = nodeIds;
    const keep = new Set(nodeIds);
    for (const id of this.entries.keys()) if (!keep.has(id)) this.entries.delete(id);
  }
}
