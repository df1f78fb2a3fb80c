/**
 * Whether a rank its node has not started has run out of time to start (contract §5.2, ADR 0035).
 *
 * The agent reports RUNNING, and lists the attempt in its beats, as soon as it has started the
 * attempt's process (for an image, the runtime's `run`, which pulls first): a pull that is slow but
 * alive is already RUNNING. A rank still not started `timeoutMs` after it was placed is the node's
 * failure, with one exception: time during which the control plane could not have heard the start
 * (its own view was stale: a broker restart, a reconciler restart) is not counted, so the clock
 * runs from the later of the placement and `absenceFrom` (absenceCountsFrom, ADR 0007); null
 * means the view is stale now and nothing is judged.
 */
export function startTimedOut(placedAtMs: number, nowMs: number, timeoutMs: number, absenceFrom: number | null): boolean {
  return absenceFrom !== null && nowMs - Math.max(placedAtMs, absenceFrom) >= timeoutMs;
}
