import { createHash } from 'node:crypto';
import { TOPICS } from '@gantry/contracts';
import { MessageProducer } from './kafka-client';
import { OutgoingMessage } from './message';

export interface DeadLetter {
  sourceTopic: string;
  partition: number | null;
  offset: string | null;
  key: Buffer | string | null;
  value: Buffer | string | null;
  reason: string;
}

export const DEAD_LETTER_HEADERS = {
  reason: 'x-dead-letter-reason',
  sourceTopic: 'x-source-topic',
  sourcePartition: 'x-source-partition',
  sourceOffset: 'x-source-offset',
  failedAt: 'x-failed-at',
  /** Set when the value was cut to fit (DEAD_LETTER_MAX_VALUE_BYTES): the original's size and SHA-256. */
  originalBytes: 'x-original-bytes',
  originalSha256: 'x-original-sha256',
} as const;

/**
 * The most of a message's value a dead letter keeps. A dead letter must itself fit the broker's
 * limits: a copy of a message refused for its size would be refused too, and would block the
 * consumer that tries to park it.
 */
export const DEAD_LETTER_MAX_VALUE_BYTES = 64 * 1024;
const MAX_KEY_BYTES = 1024;
const MAX_REASON_CHARS = 2048;

const asBuffer = (v: Buffer | string) => (typeof v === 'string' ? Buffer.from(v) : v);

/** The dead letter as a message that always fits: the value cut to DEAD_LETTER_MAX_VALUE_BYTES, with what was cut named. */
export function deadLetterMessage(l: DeadLetter, now = Date.now()): OutgoingMessage {
  const headers: Record<string, string> = {
    [DEAD_LETTER_HEADERS.reason]: l.reason.slice(0, MAX_REASON_CHARS),
    [DEAD_LETTER_HEADERS.sourceTopic]: l.sourceTopic.slice(0, 256),
    [DEAD_LETTER_HEADERS.sourcePartition]: l.partition === null ? '' : String(l.partition),
    [DEAD_LETTER_HEADERS.sourceOffset]: l.offset ?? '',
    [DEAD_LETTER_HEADERS.failedAt]: String(now),
  };
  let value: Buffer = l.value === null ? Buffer.alloc(0) : asBuffer(l.value);
  if (value.length > DEAD_LETTER_MAX_VALUE_BYTES) {
    headers[DEAD_LETTER_HEADERS.originalBytes] = String(value.length);
    headers[DEAD_LETTER_HEADERS.originalSha256] = createHash('sha256').update(value).digest('hex');
    value = value.subarray(0, DEAD_LETTER_MAX_VALUE_BYTES);
  }
  const key = l.key === null ? null : asBuffer(l.key).subarray(0, MAX_KEY_BYTES).toString('utf8');
  return { key, value, headers };
}

/** Parks messages that can never be processed, with why and where they came from; the consumer moves on. */
export class DeadLetterPublisher {
  constructor(private readonly producer: MessageProducer) {}

  async publish(letters: DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    // At most 16 letters (1 MiB) a request, so a batch of large ones never exceeds the broker's limit.
    for (let i = 0; i < letters.length; i += 16) {
      await this.producer.send(
        TOPICS.deadLetter,
        letters.slice(i, i + 16).map((l) => deadLetterMessage(l)),
      );
    }
  }
}
