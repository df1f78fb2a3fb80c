/**
 * A value loaded at most once per `maxAgeMs` and served stale while one refresh runs in the
 * background, so readers never wait for a slow load after the first one. A failed refresh keeps
 * the old value and is retried by the next reader. With `waitWhenStale`, a reader of an expired
 * value waits for the refresh instead (never older than `maxAgeMs`; still one load at a time), for
 * callers that poll and would otherwise always see the value of their previous poll.
 */
export class RefreshingValue<T> {
  private value: { v: T; at: number } | null = null;
  private loading: Promise<T> | null = null;

  constructor(
    private readonly load: () => Promise<T>,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
    private readonly waitWhenStale = false,
  ) {}

  async get(): Promise<T> {
    if (this.value && this.now() - this.value.at < this.maxAgeMs) return this.value.v;
    const refresh = this.refresh();
    if (this.value && !this.waitWhenStale) {
      refresh.catch(() => undefined);
      return this.value.v;
    }
    return refresh;
  }

  private refresh(): Promise<T> {
    this.loading ??= this.load()
      .then((v) => {
        this.value = { v, at: this.now() };
        return v;
      })
      .finally(() => (this.loading = null));
    return this.loading;
  }
}
