import fc from 'fast-check';
import { RetryPolicy, backoffDelayMs, decideExitRetry, resolveRetryPolicy } from './retry-policy';

const policy = (over: Partial<RetryPolicy> = {}): RetryPolicy => ({
  maxRetries: 2,
  backoffSeconds: 10,
  maxBackoffSeconds: 600,
  retryOnExitCodes: [3, 75],
  ...over,
});
const fixed = (r: number) => () => r;

describe('backoffDelayMs', () => {
  it.each<[string, Partial<RetryPolicy>, number, number, number]>([
    ['first retry, no jitter: half the base', {}, 1, 0, 5_000],
    ['first retry, full jitter: the base', {}, 1, 1, 10_000],
    ['second retry doubles the ceiling', {}, 2, 0, 10_000],
    ['third retry, mid jitter', {}, 3, 0.5, 30_000],
    ['the ceiling stops at maxBackoffSeconds', { maxBackoffSeconds: 30 }, 5, 1, 30_000],
    ['a maximum below the base caps the first retry too', { backoffSeconds: 60, maxBackoffSeconds: 20 }, 1, 1, 20_000],
    ['a random source out of range is clamped', {}, 1, 7, 10_000],
    ['retry 0 (never asked) is treated as the first', {}, 0, 0, 5_000],
  ])('%s', (_n, over, retry, r, expected) => {
    expect(backoffDelayMs(policy(over), retry, fixed(r))).toBe(expected);
  });

  it('never waits less for a later retry until the maximum is reached, whatever the jitter, and never waits past it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3600 }),
        fc.integer({ min: 1, max: 86_400 }),
        fc.integer({ min: 1, max: 10 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (backoffSeconds, maxBackoffSeconds, retry, r1, r2) => {
          const p = policy({ backoffSeconds, maxBackoffSeconds });
          const now = backoffDelayMs(p, retry, fixed(r1));
          const next = backoffDelayMs(p, retry + 1, fixed(r2));
          // Past the maximum the ceiling stops growing and the jitter alone decides.
          if (backoffSeconds * 2 ** retry <= maxBackoffSeconds) expect(next).toBeGreaterThanOrEqual(now - 1); // rounding
          expect(next).toBeLessThanOrEqual(maxBackoffSeconds * 1000);
          expect(now).toBeGreaterThanOrEqual(Math.min(backoffSeconds, maxBackoffSeconds) * 500 - 1);
        },
      ),
    );
  });
});

describe('decideExitRetry', () => {
  it.each<[string, RetryPolicy, { attempt: number; exitCode: number | null | undefined; reason?: string | null; retriesForgiven?: number }, object]>([
    ['a listed code with retries left is retried after the backoff', policy(), { attempt: 1, exitCode: 3 }, { kind: 'retry', delayMs: 5_000 }],
    ['the second retry waits on a doubled ceiling', policy(), { attempt: 2, exitCode: 75 }, { kind: 'retry', delayMs: 10_000 }],
    ['retries used up: the job ends', policy(), { attempt: 3, exitCode: 3 }, { kind: 'end' }],
    ['no retries at all', policy({ maxRetries: 0 }), { attempt: 1, exitCode: 3 }, { kind: 'end' }],
    ['a code not listed ends it', policy(), { attempt: 1, exitCode: 1 }, { kind: 'end' }],
    ['an empty list retries no exit', policy({ retryOnExitCodes: [] }), { attempt: 1, exitCode: 3 }, { kind: 'end' }],
    ['exit 0 is not a failure to retry', policy({ retryOnExitCodes: [0] }), { attempt: 1, exitCode: 0 }, { kind: 'end' }],
    ['no exit code (a signal) is not retried', policy(), { attempt: 1, exitCode: null }, { kind: 'end' }],
    [
      'a deadline kill is never retried, even with a listed code',
      policy({ retryOnExitCodes: [137] }),
      { attempt: 1, exitCode: 137, reason: 'DEADLINE_EXCEEDED' },
      { kind: 'end' },
    ],
    ['a spawn failure is never retried', policy(), { attempt: 1, exitCode: 3, reason: 'SPAWN_FAILED: ENOENT' }, { kind: 'end' }],
    ['retries used by lost attempts count too', policy({ maxRetries: 2 }), { attempt: 3, exitCode: 3 }, { kind: 'end' }],
    [
      'an attempt ended by a drain used no retry (and does not grow the backoff)',
      policy({ maxRetries: 2 }),
      { attempt: 3, exitCode: 3, retriesForgiven: 1 },
      { kind: 'retry', delayMs: 10_000 },
    ],
  ])('%s', (_n, p, failed, expected) => {
    expect(decideExitRetry(p, { reason: null, ...failed }, fixed(0))).toEqual(expected);
  });

  it('retries at most maxRetries times over any history of failures', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 }), fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 12, maxLength: 12 }), (maxRetries, codes) => {
        const p = policy({ maxRetries, retryOnExitCodes: [1, 2, 3, 4, 5] });
        let attempt = 1;
        while (decideExitRetry(p, { attempt, exitCode: codes[attempt - 1], reason: null }, Math.random).kind === 'retry') attempt++;
        expect(attempt - 1).toBe(maxRetries);
      }),
    );
  });
});

describe('resolveRetryPolicy', () => {
  it.each<[string, number | null | undefined, Partial<RetryPolicy> | null | undefined, object]>([
    [
      'nothing given: no retries, the defaults',
      undefined,
      undefined,
      { ok: true, policy: { maxRetries: 0, backoffSeconds: 10, maxBackoffSeconds: 600, retryOnExitCodes: [] } },
    ],
    ['the top-level shorthand alone', 2, null, { ok: true, policy: { maxRetries: 2, backoffSeconds: 10, maxBackoffSeconds: 600, retryOnExitCodes: [] } }],
    ['the nested count alone', null, { maxRetries: 4 }, { ok: true, policy: { maxRetries: 4 } }],
    ['both, agreeing', 3, { maxRetries: 3, backoffSeconds: 1 }, { ok: true, policy: { maxRetries: 3, backoffSeconds: 1 } }],
    ['both, disagreeing: refused, naming the field', 3, { maxRetries: 2 }, { ok: false, field: 'retryPolicy.maxRetries' }],
    ['a policy without a count takes the shorthand', 1, { retryOnExitCodes: [75, 3, 3] }, { ok: true, policy: { maxRetries: 1, retryOnExitCodes: [3, 75] } }],
  ])('%s', (_n, top, nested, expected) => {
    expect(resolveRetryPolicy(top, nested)).toMatchObject(expected);
  });
});
