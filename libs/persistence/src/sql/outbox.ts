import { Sql } from './sql';

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
