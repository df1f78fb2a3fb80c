/**
 * A read started now and looked at later without waiting for it: the snapshots' periodic full
 * reads (50,000 rows or scores) run beside the scheduling cycles instead of inside one. Inside a
 * cycle such a read held every placement for 1.5–1.8 s once every five minutes on the bench
 * machine (2026-12-06), the dispatch p99 of the whole minute around it.
 */
export class BackgroundRead<T> {
  private outcome: { ok: true; value: T } | { ok: false; error: unknown } | null = null;

  constructor(read: Promise<T>) {
    read.then(
      (value) => (this.outcome = { ok: true, value }),
      (error: unknown) => (this.outcome = { ok: false, error }),
    );
  }

  /** null while the read is under way; then its value, or its error. */
  settled(): { ok: true; value: T } | { ok: false; error: unknown } | null {
    return this.outcome;
  }
}
