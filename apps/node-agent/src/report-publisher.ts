import { JobReportMessage, TOPICS } from '@gantry/contracts';
import { MessageProducer, TraceHeaders, currentTraceHeaders } from '@gantry/messaging';
import { NodeKeys } from './identity/node-keys';

export interface ReportSink {
  /** Queues the report; `acked` runs once Kafka has acknowledged it (the agent then forgets it was unsent). */
  publish(report: JobReportMessage, trace: TraceHeaders, acked?: () => void): void;
  /** The trace context active now (the command being handled), for the reports of the attempt it starts. */
  traceHeaders(): TraceHeaders;
}

/** Reports per Kafka send at most. */
const MAX_REPORTS_PER_SEND = 500;

/**
 * Queues job reports and sends them in batches, signed as their node (contract 4.1), retrying until
 * Kafka acknowledges: a report is never dropped because the broker was briefly away. Order per node
 * is kept (one queue, key = nodeId).
 *
 * A send starts on the turn of the event loop after the first report queued (setImmediate), not on
 * the report itself: the RUNNING reports of a batch of RUNs, or the ends of attempts whose timers
 * fire together, then go in one send instead of one alone and the rest after it. Nothing waits for
 * a timer; reports queued while a send is in flight go in the next.
 */
export class ReportPublisher implements ReportSink {
  private queue: Array<{ report: JobReportMessage; headers: TraceHeaders; acked?: () => void }> = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;
  private backoffMs = 0;
  private held = false;

  constructor(
    private readonly producer: MessageProducer,
    private readonly keys: NodeKeys,
    private readonly logger: { warn(o: object, m: string): void },
  ) {}

  publish(report: JobReportMessage, trace: TraceHeaders, acked?: () => void): void {
    this.queue.push({ report, headers: trace, acked });
    if (this.scheduled || this.flushing || this.held) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.kick();
    });
  }

  /** Queues without sending until `release` (the agent has recovered its attempts before it has its nodes' credentials). */
  hold(): void {
    this.held = true;
  }

  release(): void {
    this.held = false;
    if (this.queue.length > 0) this.kick();
  }

  traceHeaders(): TraceHeaders {
    return currentTraceHeaders();
  }

  get pending(): number {
    return this.queue.length;
  }

  private kick(): void {
    if (this.flushing) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) setTimeout(() => this.kick(), this.backoffMs);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.slice(0, MAX_REPORTS_PER_SEND);
    if (batch.length === 0) return;
    try {
      await this.producer.send(
        TOPICS.jobReports,
        batch.map((b) => {
          const value = JSON.stringify(b.report);
          return { key: b.report.nodeId, value, headers: { ...b.headers, ...this.keys.headers(b.report.nodeId, value) } };
        }),
      );
      this.queue.splice(0, batch.length);
      this.backoffMs = 0;
      for (const b of batch) {
        try {
          b.acked?.();
        } catch (err) {
          this.logger.warn({ err, jobId: b.report.jobId }, 'acknowledged report not recorded as sent; it is sent again after a restart');
        }
      }
    } catch (err) {
      this.backoffMs = Math.min(5_000, Math.max(100, this.backoffMs * 2));
      this.logger.warn({ err, pending: this.queue.length }, 'job reports not acknowledged; retrying');
    }
  }

  /** Waits until the queue is empty or `timeoutMs` passes (shutdown). */
  async drain(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length > 0 && Date.now() < deadline) {
      this.kick();
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
