/**
 * How many creates the gateway lets in at once: an AIMD limit on concurrency driven by their latency
 * (additive increase, multiplicative decrease; Netflix concurrency-limits' AIMDLimit, TCP's
 * congestion window). By Little's law the time an accepted request spends inside is the number in
 * flight over the rate they finish at, so holding in-flight work near the rate the stack sustains
 * times a latency target keeps what is accepted near that target under any overload, and everything
 * above it is refused at the door, before it costs a Redis call, a body parse or a statement.
 *
 * The limit shrinks, to `backoff` times what was in flight, when a request took longer than
 * `targetMs` (at most once per `targetMs`: the requests already inside when the stack slowed all
 * finish slow, and one slowdown is one signal),
 * and grows by 1/limit for each request that finished in time while the limit was at least half
 * used: about one a round of `limit` requests, as TCP's congestion window grows by one segment a
 * round trip (growing by one per request, as Netflix's AIMDLimit does, overshot by hundreds at a
 * thousand creates a second, and what was let in waited twice the target). An idle gateway's
 * limit says nothing about what it could carry, so it does not climb. The limit is fractional;
 * `admits` uses its whole part.
 */
export interface ConcurrencyLimitOptions {
  /** A request slower than this, ms, says the stack is past what it sustains. */
  targetMs: number;
  /** Never below (a stall of everything must not shut the door for long) nor above these. */
  min: number;
  max: number;
  /** Factor applied on a slow request, 0 < backoff < 1. */
  backoff: number;
}

export interface ConcurrencyLimitState {
  limit: number;
  /** When the limit last shrank, ms (epoch or monotonic, as the caller's clock). */
  lastDecreaseAtMs: number;
}

/** One request that finished: its latency, how many were in flight when it started, and when it finished. */
export interface LatencySample {
  latencyMs: number;
  inFlight: number;
  atMs: number;
}

export function initialConcurrencyLimit(opts: ConcurrencyLimitOptions): ConcurrencyLimitState {
  return { limit: opts.max, lastDecreaseAtMs: Number.NEGATIVE_INFINITY };
}

export function nextConcurrencyLimit(state: ConcurrencyLimitState, sample: LatencySample, opts: ConcurrencyLimitOptions): ConcurrencyLimitState {
  if (sample.latencyMs > opts.targetMs) {
    if (sample.atMs - state.lastDecreaseAtMs < opts.targetMs) return state;
    // From what was in flight, not from the limit: a limit far above the work it let in (the
    // gateway starts wide open) would otherwise take many rounds to reach it.
    const base = Math.min(state.limit, Math.max(sample.inFlight, 1));
    return { limit: Math.max(opts.min, Math.floor(base * opts.backoff)), lastDecreaseAtMs: sample.atMs };
  }
  if (sample.inFlight * 2 >= state.limit && state.limit < opts.max) return { ...state, limit: Math.min(opts.max, state.limit + 1 / state.limit) };
  return state;
}

/** Whether one more request may come in now. */
export function admits(state: ConcurrencyLimitState, inFlight: number): boolean {
  return inFlight < Math.floor(state.limit);
}
