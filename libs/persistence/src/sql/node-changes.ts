import { NodeRecord, toNodeRecord } from './nodes';
import { PagedReadOptions } from '../paged-read-options';
import { PreparedStatement, Sql, prepared } from './sql';

/** A node's row as read, with the transaction that last wrote it: (id, changedXid) names the row's version. */
export type WrittenNode = NodeRecord & { changedXid: string };

export interface NodeChanges {
  /**
   * Pass back as `since` next time. The xmin of the statement's snapshot: every transaction
   * below it had ended when the rows were read, so what it wrote was in this answer or an earlier one.
   */
  horizon: string;
  /** Every node when `since` was null; otherwise the nodes written by transactions at or after `since`. */
  nodes: WrittenNode[];
  /**
   * Nodes removed (removeNode) by transactions at or after `since` that are not in `nodes`: the reader
   * drops them. A node removed and registered again since is in `nodes` only. Empty for a full read.
   */
  removed: string[];
}

/** Which transaction last wrote every node (node id -> changed_xid), and the horizon of the first page. */
export interface NodeWriters {
  horizon: string;
  writers: Map<string, string>;
}

const NODES_CHANGED_SINCE = prepared(`SELECT h.horizon, h.removed, n.*, n.changed_xid::text AS changed_xid_text FROM (
       SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon,
         ARRAY(SELECT node_id FROM removed_nodes WHERE removed_xid >= $1::xid8) AS removed
     ) h
     LEFT JOIN nodes n ON n.changed_xid >= $1::xid8`);
const ALL_NODES_PAGE =
  prepared(`SELECT h.horizon, n.*, n.changed_xid::text AS changed_xid_text FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon) h
     LEFT JOIN LATERAL (SELECT * FROM nodes WHERE id > $1 ORDER BY id LIMIT $2) n ON true`);
const WRITERS_PAGE =
  prepared(`SELECT h.horizon, n.id, n.changed_xid::text AS changed_xid_text FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon) h
     LEFT JOIN LATERAL (SELECT id, changed_xid FROM nodes WHERE id > $1 ORDER BY id LIMIT $2) n ON true`);
const NODES_BY_ID = prepared(`SELECT n.*, n.changed_xid::text AS changed_xid_text FROM nodes n WHERE n.id = ANY($1::text[])`);
/** Rows per statement of a read of every node. */
const FULL_READ_PAGE = 2_000;

function toWrittenNode(r: Record<string, unknown>): WrittenNode {
  const node = toNodeRecord(r) as WrittenNode;
  node.changedXid = r.changed_xid_text as string;
  return node;
}

/**
 * Nodes changed since an earlier call, found through the id of the transaction that last wrote each
 * row (`changed_xid`, kept by a trigger, indexed). A transaction still running at the earlier read
 * is at or above that read's horizon, so whatever it commits later is read next time; nothing
 * committed is missed. Only changed rows are read and travel, not the fleet (ADR 0012). `since`
 * null: every node,
 * in pages (`full`).
 */
export async function loadNodesChangedSince(sql: Sql, since: string | null, full: PagedReadOptions = {}): Promise<NodeChanges> {
  if (since === null) {
    const { horizon, rows } = await pagesById(sql, ALL_NODES_PAGE, full);
    return { horizon, nodes: rows.map(toWrittenNode), removed: [] };
  }
  const rows = await sql.rows<Record<string, unknown> & { horizon: string; removed?: string[] }>(NODES_CHANGED_SINCE, [since]);
  const nodes = rows.filter((r) => r.id !== null).map(toWrittenNode);
  // One snapshot: a tombstone whose node is in `nodes` was registered again after its removal.
  const present = new Set(nodes.map((n) => n.id));
  return { horizon: rows[0].horizon, nodes, removed: (rows[0].removed ?? []).filter((id) => !present.has(id)) };
}

/**
 * Which transaction last wrote each node: a check of a reader's copy of the fleet (the scheduler's
 * periodic backstop to the change feed) that reads two short columns, far less of the reader's
 * CPU than every row (ADR 0012). A node whose
 * writer differs from the copy's is read again with loadNodesById.
 */
export async function loadNodeWriters(sql: Sql, paging: PagedReadOptions = {}): Promise<NodeWriters> {
  const { horizon, rows } = await pagesById(sql, WRITERS_PAGE, paging);
  return { horizon, writers: new Map(rows.map((r) => [r.id as string, r.changed_xid_text as string])) };
}

/** The nodes of `ids` that exist, as loadNodesChangedSince reads them. */
export async function loadNodesById(sql: Sql, ids: string[]): Promise<WrittenNode[]> {
  if (ids.length === 0) return [];
  return (await sql.rows<Record<string, unknown>>(NODES_BY_ID, [ids])).map(toWrittenNode);
}

/**
 * Every node's row of `page` (a statement of `id > $1 ORDER BY id LIMIT $2` with the horizon), in
 * pages of `pageSize` (FULL_READ_PAGE), one statement each, so that a reader's event loop serves its
 * other work between pages: in one statement, a large fleet's rows were parsed in one go and held
 * the scheduler's cycles meanwhile (ADR 0012). Not one snapshot, and it need not be: the horizon
 * is the first page's, so whatever was written while the pages were read (a node changed, added or
 * removed behind the read) is in the next loadNodesChangedSince(sql, horizon).
 */
async function pagesById(sql: Sql, page: PreparedStatement, paging: PagedReadOptions): Promise<{ horizon: string; rows: Array<Record<string, unknown>> }> {
  const pageSize = paging.pageSize ?? FULL_READ_PAGE;
  let horizon: string | null = null;
  let after = '';
  const rows: Array<Record<string, unknown>> = [];
  for (;;) {
    const asked = performance.now();
    const answer = await sql.rows<Record<string, unknown> & { horizon: string }>(page, [after, pageSize]);
    horizon ??= answer[0].horizon;
    const found = answer.filter((r) => r.id !== null);
    rows.push(...found);
    if (found.length < pageSize) return { horizon, rows };
    after = found[found.length - 1].id as string;
    await paging.betweenPages?.(performance.now() - asked);
  }
}
