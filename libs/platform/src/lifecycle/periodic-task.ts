/**
 * A service's background round (a sweep, a detector pass): run every `everyMs`, never two at once
 * (a tick that finds the last round still going is skipped, so a slow round cannot pile up work or
 * write the same change twice), until stopped. A round that throws goes to `onError` and the next
 * tick tries again. `stop()` waits for the round in flight, so a service can shut down after it.
 */
export class PeriodicTask {
  private timer: ReturnType<typeof setInterval> | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly everyMs: number,
    private readonly round: () => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.inFlight ??= this.round()
        .then(() => undefined, this.onError)
        .finally(() => (this.inFlight = null));
    }, this.everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }
}
