import { Gauge } from 'prom-client';

const lagGauge = new Gauge({
  name: 'gantry_consumer_lag',
  help: 'Messages behind the partition head, as of the last batch',
  labelNames: ['group', 'topic', 'partition'],
});
/** Every tracker in the process, published when /metrics is scraped. */
const trackers = new Set<PartitionProgress>();
const stuckGauge = new Gauge({
  name: 'gantry_consumer_stuck_seconds',
  help: 'How long a partition with messages behind it has not advanced (0 when it is caught up or moving)',
  labelNames: ['group', 'topic', 'partition'],
  // Computed at scrape time, so a partition that is stuck (no batch ends) still shows it growing.
  collect() {
    for (const t of trackers) t.publish();
  },
});

interface State {
  /** The next offset to handle. */
  next: bigint;
  highWatermark: bigint;
  /** When `next` last moved, or when work appeared on a caught-up partition. */
  since: number;
}

/**
 * Per assigned partition: how far behind the consumer is and since when it has not moved. A
 * partition that has messages behind it and has not advanced for `stallMs` is stalled (contract
 * 4.2): the consumer reports not ready, naming it, and gantry_consumer_stuck_seconds shows it.
 */
export class PartitionProgress {
  private readonly parts = new Map<number, State>();

  constructor(
    private readonly group: string,
    private readonly topic: string,
    private readonly stallMs: number,
    private readonly now = () => Date.now(),
  ) {
    trackers.add(this);
  }

  assigned(partitions: number[]): void {
    for (const p of this.parts.keys()) {
      if (!partitions.includes(p)) {
        this.parts.delete(p);
        lagGauge.remove({ group: this.group, topic: this.topic, partition: String(p) });
        stuckGauge.remove({ group: this.group, topic: this.topic, partition: String(p) });
      }
    }
    for (const p of partitions) if (!this.parts.has(p)) this.parts.set(p, { next: -1n, highWatermark: -1n, since: this.now() });
  }

  /** A batch from `first` arrived; the partition's head is `highWatermark`. */
  batchStarted(partition: number, first: bigint, highWatermark: bigint): void {
    const s = this.parts.get(partition) ?? { next: first, highWatermark, since: this.now() };
    // A caught-up partition that gets work starts its clock now, not when it last moved.
    if (s.next < 0n || s.next >= s.highWatermark) s.since = this.now();
    if (s.next < 0n) s.next = first;
    s.highWatermark = highWatermark > s.highWatermark ? highWatermark : s.highWatermark;
    this.parts.set(partition, s);
    lagGauge.set({ group: this.group, topic: this.topic, partition: String(partition) }, Number(s.highWatermark - s.next));
  }

  advanced(partition: number, next: bigint): void {
    const s = this.parts.get(partition);
    if (!s) return;
    s.next = next;
    s.since = this.now();
    lagGauge.set({ group: this.group, topic: this.topic, partition: String(partition) }, Number(s.highWatermark > next ? s.highWatermark - next : 0n));
  }

  /** How long each partition with lag has gone without advancing, ms (0 for the others). */
  stuckFor(): Map<number, number> {
    const now = this.now();
    const out = new Map<number, number>();
    for (const [p, s] of this.parts) out.set(p, s.next >= 0n && s.next < s.highWatermark ? now - s.since : 0);
    return out;
  }

  /** A sentence naming every stalled partition, or null when none is. */
  stalled(): string | null {
    const stalled = [...this.stuckFor()].filter(([, ms]) => ms >= this.stallMs);
    if (stalled.length === 0) return null;
    return stalled
      .map(([p, ms]) => {
        const s = this.parts.get(p)!;
        return `partition ${this.topic}/${p} has not advanced for ${Math.round(ms / 1000)} s with ${s.highWatermark - s.next} messages behind it`;
      })
      .join('; ');
  }

  publish(): void {
    for (const [p, ms] of this.stuckFor()) stuckGauge.set({ group: this.group, topic: this.topic, partition: String(p) }, ms / 1000);
  }
}
