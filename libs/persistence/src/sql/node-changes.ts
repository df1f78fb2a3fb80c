import { NodeRecord, toNodeRecord } from './nodes';
import { Sql, prepared } from './sql';

export interface NodeChanges {
  /**
   * Pass back as `since` next time. The xmin of the statement's snapshot: every transaction
   * below it had ended when the rows were read, so what it wrote was in this answer or an earlier one.
   */
  horizon: string;
  /** Every node when `since` was null; otherwise the nodes written by transactions at or after `since`. */
  nodes: NodeRecord[];
  /**
   * Nodes removed (removeNode) by transactions at or after `since` that are not in `nodes`: the reader
   * drops them. A node removed and registered again since is in `nodes` only. Empty for a full read.
   */
  removed: string[];
}

const NODES_CHANGED_SINCE = prepared(`SELECT h.horizon, h.removed, n.* FROM (
       SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,
         ARRAY(SELECT node_id FROM removed_nodes WHERE removed_xid >= $1::xid8) AS removed
     ) h
     LEFT JOIN nodes n ON n.changed_xid >= $1::xid8`);
const ALL_NODES_PAGE = prepared(`SELECT h.horizon, n.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon) h
     LEFT JOIN LATERAL (SELECT * FROM nodes WHERE id > $1 ORDER BY id LIMIT $2) n ON true`);
/** Rows per statement of a full read. */
const FULL_READ_PAGE = 2_000;

/**
 * Nodes changed since an earlier call, found through the id of the transaction that last wrote each
 * row (`changed_xid`, kept by a trigger, indexed). A transaction still running at the earlier read
 * is at or above that read's horizon, so whatever it commits later is read next time; nothing
 * committed is missed. Only changed rows are read and travel: at 50,000 nodes a full read costs
 * ~0.3 s of the reader's CPU (up to a second under load), this a few ms. `since` null: every node.
 */
export async function loadNodesChangedSince(sql: Sql, since: string | null, fullReadPage = FULL_READ_PAGE): Promise<NodeChanges> {
  if (since === null) return loadAllNodes(sql, fullReadPage);
  const rows = await sql.rows<Record<string, unknown> & { horizon: string; removed?: string[] }>(NODES_CHANGED_SINCE, [since]);
  const nodes = rows.filter((r) => r.id !== null).map(toNodeRecord);
  // One snapshot: a tombstone whose node is in `nodes` was registered again after its removal.
  const present = new Set(nodes.map((n) => n.id));
  return { horizon: rows[0].horizon, nodes, removed: (rows[0].removed ?? []).filter((id) => !present.has(id)) };
}

/**
 * Every node, in pages of `pageSize` (FULL_READ_PAGE) by id, one statement each, so that a reader's event loop
 * serves its other work between pages: in one statement, 50,000 rows were parsed in one go and held
 * the scheduler's cycles for a second (2026-12-06). Not one snapshot, and it need not be: the horizon
 * is the first page's, so whatever was written while the pages were read (a node changed, added or
 * removed behind the read) is in the next loadNodesChangedSince(sql, horizon).
 */
async function loadAllNodes(sql: Sql, pageSize: number): Promise<NodeChanges> {
  let horizon: string | null = null;
  let after = '';
  const nodes: NodeRecord[] = [];
  for (;;) {
    const rows = await sql.rows<Record<string, unknown> & { horizon: string }>(ALL_NODES_PAGE, [after, pageSize]);
    horizon ??= rows[0].horizon;
    const page = rows.filter((r) => r.id !== null).map(toNodeRecord);
    nodes.push(...page);
    if (page.length < pageSize) return { horizon, nodes, removed: [] };
    after = page[page.length - 1].id;
  }
}
