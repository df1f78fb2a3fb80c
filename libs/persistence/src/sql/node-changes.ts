import { NodeRecord, toNodeRecord } from './nodes';
import { Sql, prepared } from './sql';

export interface NodeChanges {
  /**
   * Pass back as `since` next time. The xmin of the statement's snapshot: every transaction
   * below it had ended when the rows were read, so what it wrote was in this answer or an earlier one.
   */
  horizon: string;
  /** Every node when `since` was null; otherwise the nodes written by transactions at or after `since` (and maybe a few more). */
  nodes: NodeRecord[];
}

const NODES_CHANGED_SINCE = prepared(`SELECT h.horizon, n.* FROM (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::numeric % 4294967296)::text AS horizon) h
     LEFT JOIN nodes n ON $1::text IS NULL OR age(n.xmin) <= age($1::text::xid)`);

/**
 * Nodes changed since an earlier call, found by the transaction that wrote each row version
 * (`xmin`) rather than by a column every writer would have to maintain. A transaction still running
 * at the earlier read is at or above that read's horizon, so whatever it commits later is read
 * next time; nothing committed is missed. `age()` compares transaction ids across wraparound;
 * a frozen row reads as infinitely old, which is right for a row that has not changed in a long
 * time (an aggressive VACUUM FREEZE of a fresh row could hide one change: callers that keep a copy
 * re-read everything now and then). The filter is a scan in Postgres, but only changed rows travel
 * and are parsed: at 50,000 nodes a full read costs ~0.3 s of the reader's CPU, this a few ms.
 */
export async function loadNodesChangedSince(sql: Sql, since: string | null): Promise<NodeChanges> {
  const rows = await sql.rows<Record<string, unknown> & { horizon: string }>(
    NODES_CHANGED_SINCE,
    [since],
  );
  return { horizon: rows[0].horizon, nodes: rows.filter((r) => r.id !== null).map(toNodeRecord) };
}
