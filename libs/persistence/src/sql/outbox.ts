import { Sql, prepared } from './sql';

export interface OutboxMessage {
  topic: string;
  key: string | null;
  value: object;
  /** W3C trace context etc., carried into the Kafka message headers. */
  headers?: Record<string, string>;
}

const committedListeners = new Set<() => void>();

/**
 * Subscribes to "this process committed outbox rows" (the relay in the same process wakes at once).
 * In-process rather than LISTEN/NOTIFY: NOTIFY takes a cluster-wide lock through each commit's WAL
 * flush, which halved commit throughput here, and woke every relay for every row. Rows written by
 * a process without a relay are found by the relays' poll. Returns the unsubscribe function.
 */
export function onOutboxCommitted(listener: () => void): () => void {
  committedListeners.add(listener);
  return () => committedListeners.delete(listener);
}

function announceOutboxCommit(): void {
  for (const l of committedListeners) l();
}

/** Tells the local relay, once the caller's transaction commits, that outbox rows are waiting. */
export function wakeRelayOnCommit(sql: Sql): void {
  sql.afterCommit(announceOutboxCommit);
}

/** Writes messages in the caller's transaction; the local relay wakes when it commits. */
export async function enqueueOutbox(sql: Sql, messages: OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const params: unknown[] = [];
  const tuples = messages.map((m, i) => {
    params.push(m.topic, m.key, JSON.stringify(m.value), JSON.stringify(m.headers ?? {}));
    const b = i * 4;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}::jsonb)`;
  });
  await sql.rows(`INSERT INTO outbox (topic, key, value, headers) VALUES ${tuples.join(', ')}`, params);
  wakeRelayOnCommit(sql);
}

/** An outbox row as a relay claims it; `ctid` names it for deleteClaimedOutboxRows. */
export interface ClaimedOutboxRow {
  ctid: string;
  id: string;
  topic: string;
  key: string | null;
  value: string;
  headers: Record<string, string>;
}

/**
 * Claiming and deleting in one statement, `DELETE ... WHERE id IN (SELECT ... LIMIT $1 FOR UPDATE
 * SKIP LOCKED)`, let the planner, whose statistics often say the outbox is empty (its vacuums run
 * while it is), pick a nested loop that re-ran the locking subquery for every row: quadratic in
 * the backlog, so a relay that fell behind fell further (bench:dispatch,
 * docs/benchmarks/history/dispatch.md). So the claim only locks and reads.
 */
const CLAIM = prepared(`SELECT ctid::text AS ctid, id, topic, key, value, headers FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`);

/** Locks and reads the first `limit` rows no other relay holds, in id order, for the caller's transaction. */
export async function claimOutboxRows(sql: Sql, limit: number): Promise<ClaimedOutboxRow[]> {
  return sql.rows<ClaimedOutboxRow>(CLAIM, [limit]);
}

/**
 * Deletes claimed rows by their tuple ids (stable while the transaction holds their locks). Not a
 * named statement on purpose: planned with the array in hand, it is a TID scan or one hashed pass
 * over the table, never a scan per row.
 */
export async function deleteClaimedOutboxRows(sql: Sql, rows: readonly Pick<ClaimedOutboxRow, 'ctid'>[]): Promise<void> {
  if (rows.length > 0) await sql.rows('DELETE FROM outbox WHERE ctid = ANY ($1::tid[])', [rows.map((r) => r.ctid)]);
}

/**
 * Vacuums the outbox (outside any transaction; `SKIP_LOCKED`: a vacuum already running elsewhere is
 * not waited for). Claimed rows are deleted, and until a vacuum their index entries stay at the head
 * of `outbox_pkey`, where every claim's `ORDER BY id` scan walks them again (ADR 0002 has the
 * cost). `TRUNCATE false`: a queue
 * table's empty tail is refilled within moments, and cutting it off takes the table's exclusive
 * lock, which every writer of outbox rows would wait on. A role that does not own the table gets a
 * warning and nothing is done.
 */
export async function vacuumOutbox(sql: Sql): Promise<void> {
  await sql.rows('VACUUM (SKIP_LOCKED, TRUNCATE false) outbox');
}

/** Rows published between two vacuums of the outbox by one relay (GANTRY_OUTBOX_VACUUM_ROWS). */
export const OUTBOX_VACUUM_EVERY_ROWS = 2000;

/** When a relay's next vacuum is due: after every `everyRows` rows it published; never when 0. */
export class OutboxVacuumSchedule {
  private published = 0;

  constructor(private readonly everyRows: number = OUTBOX_VACUUM_EVERY_ROWS) {}

  /** Counts `rows` just published; true when a vacuum is due (the count then starts again). */
  due(rows: number): boolean {
    this.published += rows;
    if (this.everyRows <= 0 || this.published < this.everyRows) return false;
    this.published = 0;
    return true;
  }
}
