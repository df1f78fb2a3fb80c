import { Producer } from 'kafkajs';
import { JobReportMessage, TOPICS } from '@gantry/contracts';
import { currentTraceHeaders } from '@gantry/messaging';

export interface ReportSink {
  publish(report: JobReportMessage): void;
}

/**
 * Queues job reports and sends them in batches, retrying until Kafka acknowledges: a report is
 * never dropped because the broker was briefly away. Order per node is kept (one queue, key = nodeId).
 */
export class ReportPublisher implements ReportSink {
  private queue: Array<{ report: JobReportMessage; headers: Record<string, string> }> = [];
  private flushing: Promise<void> | null = null;
  private backoffMs = 0;

  constructor(private readonly producer: Producer, private readonly logger: { warn(o: object, m: string): void }) {}

  publish(report: JobReportMessage): void {
    this.queue.push({ report, headers: currentTraceHeaders() });
    this.kick();
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
    const batch = this.queue.slice(0, 500);
    if (batch.length === 0) return;
    try {
      await this.producer.send({
        topic: TOPICS.jobReports,
        messages: batch.map((b) => ({ key: b.report.nodeId, value: JSON.stringify(b.report), headers: b.headers })),
      });
      this.queue.splice(0, batch.length);
      this.backoffMs = 0;
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
