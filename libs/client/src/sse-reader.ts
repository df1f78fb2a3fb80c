import { createParser } from 'eventsource-parser';

export interface SseMessage {
  id: string | undefined;
  data: string;
}

/**
 * The messages of a text/event-stream body, in order, as they arrive (comments such as keep-alives
 * are skipped by the parser). Ends when the server ends the stream.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const queue: SseMessage[] = [];
  const parser = createParser({ onEvent: (e) => void queue.push({ id: e.id, data: e.data }) });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      while (queue.length) yield queue.shift()!;
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => undefined);
  }
}
