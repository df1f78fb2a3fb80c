/**
 * Whether a database error means "Postgres did not answer in time or cannot be reached" (so the
 * request may succeed later: 503 with Retry-After) rather than something wrong with the request or
 * the code. SQLSTATEs: 57014 a statement timeout (or a cancel), 57P01-57P03 the server is shutting
 * down or starting, 53300 no connection slot, 55P03 a lock timeout, class 08 a connection failure.
 * Without one: the pool's acquire timeout, the client's read timeout, a dropped connection.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown; driverError?: { code?: unknown; message?: unknown } } | null;
  const code = err?.driverError?.code ?? err?.code;
  if (typeof code === 'string') {
    if (/^(57014|57P0[123]|53300|55P03|08...)$/.test(code)) return true;
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH)$/.test(code)) return true;
  }
  const message = String(err?.driverError?.message ?? err?.message ?? '');
  return /^(timeout exceeded when trying to connect|Query read timeout|Connection terminated)/.test(message);
}
