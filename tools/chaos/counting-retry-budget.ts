import { RetryBudget } from '@gantry/client';

/**
 * The client's retry budget, unchanged, that also notes when each retry was wanted: the client asks
 * the budget exactly once per retryable failure (network error, 429, 5xx) it would retry, so these
 * are the failed attempts a user of GantryClient never sees.
 */
export class CountingRetryBudget extends RetryBudget {
  readonly retriedAt: number[] = [];
  readonly refusedAt: number[] = [];

  override trySpend(): boolean {
    const ok = super.trySpend();
    (ok ? this.retriedAt : this.refusedAt).push(Date.now());
    return ok;
  }
}
