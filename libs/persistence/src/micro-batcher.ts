export interface MicroBatcherOptions<I, O> {
  /** Most items handed to one `run`. */
  maxBatch: number;
  /** Most `run` calls in flight at once; further items wait and form the next batch. */
  maxInFlight: number;
  /** Handles a batch; returns one result per item, in order. A throw rejects every item of the batch. */
  run: (items: I[]) => Promise<O[]>;
}

/**
 * Coalesces concurrent calls into batches (group commit): an item starts at once while a run slot
 * is free, so a lone request pays no added latency, and items that arrive while every slot is busy
 * go together in the next run. Under load, batches grow with the load instead of queueing one
 * transaction per request.
 */
export class MicroBatcher<I, O> {
  private readonly waiting: Array<{ item: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = [];
  private inFlight = 0;

  constructor(private readonly opts: MicroBatcherOptions<I, O>) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Items waiting for a run slot. */
  get backlog(): number {
    return this.waiting.length;
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.opts.maxBatch);
      this.inFlight++;
      this.opts
        .run(batch.map((b) => b.item))
        .then(
          (results) => {
            if (results.length !== batch.length) throw new Error(`batch of ${batch.length} returned ${results.length} results`);
            batch.forEach((b, i) => b.resolve(results[i]));
          },
        )
        .catch((e) => batch.forEach((b) => b.reject(e)))
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}
