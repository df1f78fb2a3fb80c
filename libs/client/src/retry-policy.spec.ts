import { DEFAULT_RETRY_POLICY, RetryBudget, backoffDelay, isRetryable } from './retry-policy';

describe('isRetryable', () => {
  it.each<[{ status: number } | { networkError: true }, boolean]>([
    [{ networkError: true }, true],
    [{ status: 429 }, true],
    [{ status: 500 }, true],
    [{ status: 503 }, true],
    [{ status: 400 }, false],
    [{ status: 401 }, false],
    [{ status: 404 }, false],
    [{ status: 409 }, false],
    [{ status: 422 }, false],
    [{ status: 201 }, false],
  ])('%j -> %s', (outcome, expected) => expect(isRetryable(outcome)).toBe(expected));
});

describe('backoffDelay', () => {
  const p = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1_000 };
  it.each([
    [0, 0.999, 99],
    [1, 0.999, 199],
    [2, 0.5, 200],
    [3, 0.999, 799],
    [4, 0.999, 999], // capped at maxDelayMs
    [10, 0.999, 999],
    [2, 0, 0], // full jitter reaches zero
  ])('retry %i with random %d -> %i ms', (retry, random, expected) => expect(backoffDelay(retry, p, random)).toBe(expected));

  it('honours Retry-After as a floor, capped by maxDelayMs', () => {
    expect(backoffDelay(0, p, 0, 300)).toBe(300);
    expect(backoffDelay(0, p, 0, 60_000)).toBe(1_000);
  });

  it('has sane defaults', () => expect(DEFAULT_RETRY_POLICY.maxRetries).toBeGreaterThan(0));
});

describe('RetryBudget', () => {
  it('allows a burst of retries, then one per 1/ratio requests', () => {
    const b = new RetryBudget(0.1, 3);
    expect([b.trySpend(), b.trySpend(), b.trySpend(), b.trySpend()]).toEqual([true, true, true, false]);
    for (let i = 0; i < 9; i++) b.onRequest();
    expect(b.trySpend()).toBe(false);
    b.onRequest();
    expect(b.trySpend()).toBe(true);
  });
});
