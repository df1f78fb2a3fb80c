/**
 * A read started now and looked at later without waiting for it: the snapshots' periodic full
 * reads (every node row or score) run beside the scheduling cycles instead of inside one. Inside a
 * cycle such a read held every placement until it ended (ADR 0012, bench:dispatch).
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
