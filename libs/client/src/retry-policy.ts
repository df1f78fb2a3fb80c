/** When and how long to wait before retrying a request. Pure: the client supplies time and randomness. */
export interface RetryPolicy {
  /** Attempts after the first. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 4, baseDelayMs: 100, maxDelayMs: 5_000 };

/** Network errors, 429 and 5xx are worth another try; any other answer is final. */
export function isRetryable(outcome: { status: number } | { networkError: true }): boolean {
  if ('networkError' in outcome) return true;
  return outcome.status === 429 || outcome.status >= 500;
}

/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff And Jitter"):
 * a uniform draw in [0, min(max, base * 2^retry)). `retryAfterMs` (from a 429/503) is a floor.
 */
export function backoffDelay(retry: number, policy: RetryPolicy, random: number, retryAfterMs: number | null = null): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  const jittered = Math.floor(random * ceiling);
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, policy.maxDelayMs));
}

/**
 * A retry budget (gRPC's retry throttling): each request earns `ratio` tokens, each retry spends one,
 * and retries stop when the bucket is empty, so a struggling server is not hit by a retry storm.
 */
export class RetryBudget {
  private tokens: number;

  constructor(
    private readonly ratio = 0.1,
    private readonly max = 10,
  ) {
    this.tokens = max;
  }

  onRequest(): void {
    this.tokens = Math.min(this.max, this.tokens + this.ratio);
  }

  trySpend(): boolean {
    if (this.tokens < 1 - 1e-9) return false; // tolerate float drift from adding ratio
    this.tokens -= 1;
    return true;
  }

  get available(): number {
    return this.tokens;
  }
}
