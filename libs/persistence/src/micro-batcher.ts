export interface MicroBatcherOptions<I, O> {
  /** Most items handed to one `run`. */
  maxBatch: number;
  /** Most `run` calls in flight at once; further items wait and form the next batch. */
  maxInFlight: number;
  /** Handles a batch; returns one result per item, in order. A throw rejects every item of the batch. */
  run: (items: I[]) => Promise<O[]>;
  /**
   * Admission control: the longest an item may wait for a run slot, ms. An item that waited longer
   * is refused (OverloadedError) instead of run, and while the oldest waiting item has waited
   * longer, new items are refused at once: the backlog never holds more than this much work.
   * Unset: items wait as long as it takes.
   */
  maxWaitMs?: number;
  /**
   * Load shedding, earlier than maxWaitMs: while the oldest waiting item has waited longer than
   * this, new items are refused at once (items already waiting still run until maxWaitMs). So what
   * is accepted under overload waits about this long, not maxWaitMs. Unset: maxWaitMs alone.
   */
  shedNewAfterMs?: number;
  /** Most items waiting at once; further items are refused at once (OverloadedError). Unset: no bound. */
  maxBacklog?: number;
  /**
   * Pacing under load: the least time from the start of a run of `items` to the start of the next
   * (ms; default none). Items that arrive sooner wait and go together in that next run, so a
   * worker fed a steady stream runs fewer, larger batches; an item after a quiet spell still starts
   * at once. See loadGapMs in @gantry/domain.
   */
  gapAfterMs?: (items: I[]) => number;
  /** The clock, for tests. */
  now?: () => number;
}

/** An item refused by admission control; nothing was done with it. */
export class OverloadedError extends Error {
  constructor(readonly reason: 'backlog-full' | 'waited-too-long' | 'shedding') {
    super(
      reason === 'backlog-full'
        ? 'too much work is waiting'
        : reason === 'shedding'
          ? 'work already waiting has waited too long'
          : 'the work waited too long to start',
    );
    this.name = 'OverloadedError';
  }
}

interface Waiting<I, O> {
  item: I;
  since: number;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

/**
 * Coalesces concurrent calls into batches (group commit): an item starts at once while a run slot
 * is free, so a lone request pays no added latency, and items that arrive while every slot is busy
 * go together in the next run. Under load, batches grow with the load instead of queueing one
 * transaction per request; past `maxWaitMs` or `maxBacklog` the excess is refused, not queued.
 */
export class MicroBatcher<I, O> {
  private readonly waiting: Array<Waiting<I, O>> = [];
  private inFlight = 0;
  /** When the next run may start at the earliest (gapAfterMs of the last one), and the timer that starts it. */
  private nextRunAt = Number.NEGATIVE_INFINITY;
  private gapTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly now: () => number;

  constructor(private readonly opts: MicroBatcherOptions<I, O>) {
    this.now = opts.now ?? Date.now;
  }

  submit(item: I): Promise<O> {
    const now = this.now();
    const { maxWaitMs, maxBacklog, shedNewAfterMs } = this.opts;
    if (maxBacklog !== undefined && this.waiting.length >= maxBacklog) return Promise.reject(new OverloadedError('backlog-full'));
    const headWaitedMs = this.waiting.length > 0 ? now - this.waiting[0].since : 0;
    if (maxWaitMs !== undefined && headWaitedMs > maxWaitMs) return Promise.reject(new OverloadedError('waited-too-long'));
    if (shedNewAfterMs !== undefined && headWaitedMs > shedNewAfterMs) return Promise.reject(new OverloadedError('shedding'));
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, since: now, resolve, reject });
      this.pump();
    });
  }

  /** Items waiting for a run slot. */
  get backlog(): number {
    return this.waiting.length;
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.waiting.length > 0) {
      const gapLeft = this.nextRunAt - this.now();
      if (gapLeft > 0) {
        this.gapTimer ??= setTimeout(() => {
          this.gapTimer = null;
          this.pump();
        }, gapLeft);
        return;
      }
      this.refuseExpired();
      const batch = this.waiting.splice(0, this.opts.maxBatch);
      if (batch.length === 0) return;
      this.inFlight++;
      const items = batch.map((b) => b.item);
      if (this.opts.gapAfterMs) this.nextRunAt = this.now() + this.opts.gapAfterMs(items);
      this.opts
        .run(items)
        .then((results) => {
          if (results.length !== batch.length) throw new Error(`batch of ${batch.length} returned ${results.length} results`);
          batch.forEach((b, i) => b.resolve(results[i]));
        })
        .catch((e) => batch.forEach((b) => b.reject(e)))
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  /** Refuses, oldest first, the items that have waited longer than maxWaitMs. */
  private refuseExpired(): void {
    const { maxWaitMs } = this.opts;
    if (maxWaitMs === undefined) return;
    const now = this.now();
    let n = 0;
    while (n < this.waiting.length && now - this.waiting[n].since > maxWaitMs) n++;
    for (const w of this.waiting.splice(0, n)) w.reject(new OverloadedError('waited-too-long'));
  }
}
