import { JobLifecycleMessage, LifecycleType, TOPICS } from '@gantry/contracts';
import { MessageProducer } from './kafka-client';

/** Stronger wake-ups first: a freed slot must not be hidden behind a mere "a job was created". */
const STRENGTH: Record<LifecycleType, number> = { JOB_CREATED: 0, JOB_STATE_CHANGED: 1, CAPACITY_RELEASED: 2 };

/** Well under a scheduling cycle and the 500 ms dispatch budget; long enough to batch a burst. */
export const DEFAULT_MIN_GAP_MS = 20;

/**
 * Tells the scheduler that it may be able to place more (gantry.internal.job-lifecycle.v1), after
 * the change that makes it so has committed. Sent straight to Kafka, not through the outbox: the
 * message carries no state (the scheduler reads the queues itself), and a lost one costs at most
 * one scheduler tick (GANTRY_SCHEDULER_INTERVAL_MS), while an outbox row would cost every create
 * and every report batch a second transaction, a commit and a relay round.
 *
 * Wake-ups coalesce: one send at a time, and the next no sooner than `minGapMs` after the last one
 * began; whatever is signalled meanwhile goes in one more, of the strongest kind signalled. A lone
 * signal is sent at once; a client creating jobs back to back costs one send per gap, not one per
 * create (each send is a produce for the broker and a fetch and a cycle for the scheduler; its
 * cost: ADR 0002, bench:churn). The scheduler's own pacing
 * (nextCycleDelayMs) waits longer than the gap anyway while its queues are blocked. A failed send is
 * only logged: the next signal or the scheduler's tick covers it.
 */
export class WakeUpSender {
  private draining: Promise<void> | null = null;
  private pending: LifecycleType | null = null;
  private signals = 0;
  private sent = 0;
  private lastSendAt = -Infinity;

  constructor(
    private readonly producer: MessageProducer,
    private readonly logger: { debug(o: object, m: string): void },
    private readonly minGapMs = DEFAULT_MIN_GAP_MS,
  ) {}

  signal(type: LifecycleType): void {
    this.signals++;
    if (this.pending === null || STRENGTH[type] > STRENGTH[this.pending]) this.pending = type;
    this.kick();
  }

  private kick(): void {
    if (this.draining) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      // A signal between the loop's last check and here found it still draining.
      if (this.pending !== null) this.kick();
    });
  }

  /** signal() calls so far. */
  get signalled(): number {
    return this.signals;
  }

  /** Messages Kafka acknowledged so far (fewer than signals: they coalesce). */
  get delivered(): number {
    return this.sent;
  }

  /** Resolves once nothing is pending or in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    while (this.pending !== null) {
      const wait = this.lastSendAt + this.minGapMs - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.lastSendAt = Date.now();
      const type = this.pending;
      this.pending = null;
      const wake: JobLifecycleMessage = { type, at: Date.now() };
      try {
        await this.producer.send(TOPICS.jobLifecycle, [{ key: null, value: JSON.stringify(wake) }]);
        this.sent++;
      } catch (err) {
        this.logger.debug({ err, type }, 'scheduler wake-up not sent; its next tick will look');
      }
    }
  }
}
