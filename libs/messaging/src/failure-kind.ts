/**
 * Whether a failure is of the infrastructure (a dependency down, slow or busy: retrying the same
 * message later can succeed) rather than of the message (bad data the database refuses, a bug it
 * triggers: it fails the same way every time). Consumers retry transient failures for as long as
 * they last (a stalled partition shows on /readyz) and give any other failure a bounded number of
 * tries before parking the message (contract 4.2).
 */
/**
 * Broker answers that mean this message (or its topic) can never go as it is: retrying the same
 * request gets the same answer.
 */
const PERMANENT_KAFKA_ERRORS = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'TOPIC_AUTHORIZATION_FAILED',
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_REQUIRED_ACKS',
  'UNSUPPORTED_FOR_MESSAGE_FORMAT',
]);

export function isTransientFailure(err: unknown): boolean {
  // kafkajs wraps the last error of its own retries (KafkaJSNumberOfRetriesExceeded): judge that one.
  const cause = (err as { name?: unknown; cause?: unknown } | null)?.cause;
  if (cause && String((err as { name?: unknown }).name ?? '').startsWith('KafkaJS')) return isTransientFailure(cause);
  const type = String((err as { type?: unknown } | null)?.type ?? '');
  if (PERMANENT_KAFKA_ERRORS.has(type)) return false;
  const e = err as { code?: unknown; name?: unknown; message?: unknown; retriable?: unknown; driverError?: { code?: unknown } } | null;
  if (!e || typeof e !== 'object') return false;
  const code = String(e.driverError?.code ?? e.code ?? '');
  // Postgres SQLSTATE: connection exceptions, insufficient resources, operator intervention
  // (shutdown, restart), lock timeouts, serialization failures and deadlocks, query cancelled (statement_timeout).
  if (/^(08|53|57P0)/.test(code) || ['40001', '40P01', '55P03', '57014'].includes(code)) return true;
  // Sockets and DNS.
  if (['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND'].includes(code)) return true;
  const name = String(e.name ?? '');
  const message = String(e.message ?? '');
  // kafkajs marks what it would retry; its connection and request timeouts too.
  if (name.startsWith('KafkaJS') && (e.retriable === true || /Connection|Timeout|NumberOfRetriesExceeded|BrokerNotFound/.test(name))) return true;
  // ioredis, node-postgres's pool, and the bounded calls of our own stores.
  if (
    /MaxRetriesPerRequest|Connection is closed|Command timed out|timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|timed out/i.test(
      `${name} ${message}`,
    )
  )
    return true;
  return false;
}
