import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/** How long a client waits before reconnecting after the stream drops (the SSE `retry:` field), ms. */
const RECONNECT_MS = 2_000;

/**
 * One Server-Sent Events response. The reply is taken out of Fastify's hands (hijacked) and written
 * directly; headers already set on it (rate limits, say) are kept. `send` waits while the socket is
 * full, so a slow client holds its own follower back and nothing else.
 */
export class SseStream {
  private open = true;
  private readonly closeListeners = new Set<() => void>();

  private constructor(private readonly res: ServerResponse) {
    // A client that left before the stream started has closed already: 'close' will not come again.
    if (res.destroyed) this.open = false;
    else res.once('close', () => this.markClosed());
  }

  static start(reply: FastifyReply): SseStream {
    const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter(([, v]) => v !== undefined)) as Record<string, string | number | string[]>;
    reply.hijack();
    reply.raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no', // proxies (nginx) would otherwise hold events back
    });
    const stream = new SseStream(reply.raw);
    reply.raw.write(`retry: ${RECONNECT_MS}\n\n`);
    return stream;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** Writes one event; resolves once the socket can take more (or the client is gone). */
  async send(id: string, data: string): Promise<void> {
    if (!this.open) return;
    if (this.res.write(`id: ${id}\ndata: ${data}\n\n`)) return;
    await Promise.race([once(this.res, 'drain'), this.closed()]);
  }

  /** A comment line: ignored by clients, keeps proxies from timing out an idle stream. Skipped while data is queued. */
  comment(text: string): void {
    if (this.open && this.res.writableLength === 0) this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (!this.open) return;
    this.res.end();
    this.markClosed();
  }

  /** Resolves when the stream is closed, by either side. */
  closed(): Promise<void> {
    if (!this.open) return Promise.resolve();
    return new Promise((resolve) => this.closeListeners.add(resolve));
  }

  private markClosed(): void {
    if (!this.open) return;
    this.open = false;
    for (const l of this.closeListeners) l();
    this.closeListeners.clear();
  }
}
