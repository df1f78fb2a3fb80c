import { Sql } from './sql';

export const OUTBOX_CHANNEL = 'gantry_outbox';

export interface OutboxMessage {
  topic: string;
  key: string | null;
  value: object;
  /** W3C trace context etc., carried into the Kafka message headers. */
  headers?: Record<string, string>;
}

/** Writes messages in the caller's transaction and wakes the relay when it commits. */
export async function enqueueOutbox(sql: Sql, messages: OutboxMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const params: unknown[] = [OUTBOX_CHANNEL];
  const tuples = messages.map((m, i) => {
    params.push(m.topic, m.key, JSON.stringify(m.value), JSON.stringify(m.headers ?? {}));
    const b = 1 + i * 4;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}::jsonb)`;
  });
  // The rows and the NOTIFY in one round trip. NOTIFY is delivered on commit only, so the relay
  // never wakes for a rolled-back row.
  await sql.rows(`WITH queued AS (INSERT INTO outbox (topic, key, value, headers) VALUES ${tuples.join(', ')}) SELECT pg_notify($1, '')`, params);
}
