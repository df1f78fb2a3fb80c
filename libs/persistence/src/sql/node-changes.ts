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
const ALL_NODES = prepared(`SELECT h.horizon, n.* FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon) h
     LEFT JOIN nodes n ON true`);

/**
 * Nodes changed since an earlier call, found through the id of the transaction that last wrote each
 * row (`changed_xid`, kept by a trigger, indexed). A transaction still running at the earlier read
 * is at or above that read's horizon, so whatever it commits later is read next time; nothing
 * committed is missed. Only changed rows are read and travel: at 50,000 nodes a full read costs
 * ~0.3 s of the reader's CPU, this a few ms.
 */
export async function loadNodesChangedSince(sql: Sql, since: string | null): Promise<NodeChanges> {
  const rows = await sql.rows<Record<string, unknown> & { horizon: string; removed?: string[] }>(since === null ? ALL_NODES : NODES_CHANGED_SINCE, since === null ? [] : [since]);
  const nodes = rows.filter((r) => r.id !== null).map(toNodeRecord);
  // One snapshot: a tombstone whose node is in `nodes` was registered again after its removal.
  const present = new Set(nodes.map((n) => n.id));
  return { horizon: rows[0].horizon, nodes, removed: (rows[0].removed ?? []).filter((id) => !present.has(id)) };
}
