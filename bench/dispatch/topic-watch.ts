/**
 * A bench's own reader of one topic: its own consumer group, from the latest offset, every record
 * handed to `onRecord` with its Kafka timestamp and the time it was read. `positioned` turns true once
 * the group has joined and fetched, so that what is produced from then on is seen.
 */
import type { Consumer } from 'kafkajs';
import { KafkaSecurity, createKafka } from '@gantry/messaging';

export class TopicWatch {
  private readonly consumer: Consumer;
  private joined = false;
  private fetched = false;

  constructor(
    brokers: string,
    security: KafkaSecurity,
    groupId: string,
    private readonly topic: string,
    private readonly onRecord: (value: Buffer | null, timestampMs: number, readAtMs: number) => void,
  ) {
    const kafka = createKafka({ brokers: [brokers], clientId: groupId, security });
    // The broker answers a fetch as soon as a record arrives; the wait only paces empty polls.
    this.consumer = kafka.rawConsumer({ groupId, maxWaitTimeInMs: 500 });
    this.consumer.on(this.consumer.events.GROUP_JOIN, () => (this.joined = true));
    // The first fetch after joining resolves the group's starting offsets (latest: fromBeginning is false).
    this.consumer.on(this.consumer.events.FETCH, () => {
      if (this.joined) this.fetched = true;
    });
  }

  async start(): Promise<void> {
    await this.consumer.connect();
    await this.consumer.subscribe({ topic: this.topic, fromBeginning: false });
    await this.consumer.run({
      eachBatch: async ({ batch }) => {
        const now = Date.now();
        for (const m of batch.messages) this.onRecord(m.value, Number(m.timestamp), now);
      },
    });
  }

  get positioned(): boolean {
    return this.joined && this.fetched;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect().catch(() => undefined);
  }
}
