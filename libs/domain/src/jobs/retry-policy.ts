/**
 * When a job that failed is tried again, and after how long (contract §4.7, ADR 0022).
 *
 * `maxRetries` is shared by both kinds of retry: an attempt lost with its node (always retried
 * while retries remain, see decideAttemptLoss) and a non-zero exit whose code is listed in
 * `retryOnExitCodes`. Attempt n has used n - 1 retries, whichever kind they were.
 */
export interface RetryPolicy {
  maxRetries: number;
  /** The first retry's backoff ceiling, seconds; each later retry doubles it. */
  backoffSeconds: number;
  /** No backoff ceiling grows past this, seconds. */
  maxBackoffSeconds: number;
  /** Exit codes worth another attempt; any other end is final. */
  retryOnExitCodes: readonly number[];
}

export const RETRY_POLICY_DEFAULTS = { backoffSeconds: 10, maxBackoffSeconds: 600, retryOnExitCodes: [] as number[] } as const;

/**
 * How long retry number `retry` (1 for the first) waits, ms: "equal jitter" on an exponential
 * ceiling c = min(maxBackoff, backoff * 2^(retry - 1)): half of c fixed, the other half random.
 * The fixed half keeps retries of one job apart (a crash loop cannot spin); the random half keeps
 * many jobs that failed together (a bad shared file system) from coming back together. And since
 * the next ceiling is twice this one, retry k + 1 never waits less than retry k, whatever `random`
 * returns, until the ceiling is reached.
 */
export function backoffDelayMs(policy: Pick<RetryPolicy, 'backoffSeconds' | 'maxBackoffSeconds'>, retry: number, random: () => number): number {
  const ceilingMs = Math.min(policy.maxBackoffSeconds, policy.backoffSeconds * 2 ** Math.max(0, retry - 1)) * 1000;
  const r = Math.min(1, Math.max(0, random()));
  return Math.round(ceilingMs / 2 + (r * ceilingMs) / 2);
}

/** What the end of an attempt that failed on its own does to the job. */
export type ExitRetryDecision =
  /** Back to QUEUED, not placed again for `delayMs` (pendingReason BACKOFF). */
  | { kind: 'retry'; delayMs: number }
  /** The job ends FAILED. */
  | { kind: 'end' };

export interface FailedAttempt {
  /** The attempt that failed (1, 2, ...). */
  attempt: number;
  /** Earlier attempts that used no retry (ended by a drain). */
  retriesForgiven?: number;
  exitCode: number | null | undefined;
  /**
   * Why the agent ended it, when it was not a plain exit (DEADLINE_EXCEEDED, SPAWN_FAILED, a
   * signal): such ends are never retried, listed code or not.
   */
  reason: string | null | undefined;
}

/** Whether a failed attempt is retried: a plain non-zero exit with a listed code, while retries remain. */
export function decideExitRetry(policy: RetryPolicy, failed: FailedAttempt, random: () => number): ExitRetryDecision {
  const code = failed.exitCode;
  if (failed.reason || code === null || code === undefined || code === 0) return { kind: 'end' };
  if (!policy.retryOnExitCodes.includes(code)) return { kind: 'end' };
  const used = failed.attempt - 1 - (failed.retriesForgiven ?? 0);
  if (used >= policy.maxRetries) return { kind: 'end' };
  return { kind: 'retry', delayMs: backoffDelayMs(policy, used + 1, random) };
}

export type RetryPolicyInput = Partial<RetryPolicy>;

export type RetryPolicyResolution = { ok: true; policy: RetryPolicy } | { ok: false; field: string; message: string };

/**
 * The policy a create request asks for. Top-level `maxRetries` is a shorthand for
 * `retryPolicy.maxRetries`: either alone is used; both given must agree (else the request is
 * refused, naming the field), so no request means two things. Exit codes are kept sorted and unique.
 */
export function resolveRetryPolicy(maxRetries: number | null | undefined, input: RetryPolicyInput | null | undefined): RetryPolicyResolution {
  const nested = input?.maxRetries ?? undefined;
  const top = maxRetries ?? undefined;
  if (nested !== undefined && top !== undefined && nested !== top) {
    return {
      ok: false,
      field: 'retryPolicy.maxRetries',
      message: `retryPolicy.maxRetries (${nested}) and maxRetries (${top}) disagree; give one, or the same value`,
    };
  }
  return {
    ok: true,
    policy: {
      maxRetries: nested ?? top ?? 0,
      backoffSeconds: input?.backoffSeconds ?? RETRY_POLICY_DEFAULTS.backoffSeconds,
      maxBackoffSeconds: input?.maxBackoffSeconds ?? RETRY_POLICY_DEFAULTS.maxBackoffSeconds,
      retryOnExitCodes: [...new Set(input?.retryOnExitCodes ?? [])].sort((a, b) => a - b),
    },
  };
}
