import { Producer } from 'kafkajs';
import { TOPICS } from '@gantry/contracts';

export interface DeadLetter {
  sourceTopic: string;
  partition: number;
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  reason: string;
}

export const DEAD_LETTER_HEADERS = {
  reason: 'x-dead-letter-reason',
  sourceTopic: 'x-source-topic',
  sourcePartition: 'x-source-partition',
  sourceOffset: 'x-source-offset',
  failedAt: 'x-failed-at',
} as const;

/** Parks messages that can never be processed, with why and where they came from; the consumer moves on. */
export class DeadLetterPublisher {
  constructor(private readonly producer: Producer) {}

  async publish(letters: DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await this.producer.send({
      topic: TOPICS.deadLetter,
      messages: letters.map((l) => ({
        key: l.key,
        value: l.value,
        headers: {
          [DEAD_LETTER_HEADERS.reason]: l.reason.slice(0, 4096),
          [DEAD_LETTER_HEADERS.sourceTopic]: l.sourceTopic,
          [DEAD_LETTER_HEADERS.sourcePartition]: String(l.partition),
          [DEAD_LETTER_HEADERS.sourceOffset]: l.offset,
          [DEAD_LETTER_HEADERS.failedAt]: String(Date.now()),
        },
      })),
    });
  }
}
