import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG } from '@gantry/runtime';
import type { FastifyReply } from 'fastify';
import { GatewayEnv } from '../config';
import { SseStream } from './sse-stream';

const openStreams = new Gauge({ name: 'gantry_sse_streams_open', help: 'Event streams (SSE) this gateway holds open' });

/**
 * Every event stream this process holds: a cap on their number, one timer for all their
 * keep-alives (an idle stream costs no timer of its own and no work between two keep-alives), and
 * their end at shutdown, so that draining HTTP does not wait on streams that would never finish.
 * A client reconnects to another replica with Last-Event-ID and misses nothing.
 */
@Injectable()
export class OpenStreams implements OnModuleDestroy {
  private readonly streams = new Set<SseStream>();
  private keepAlive: NodeJS.Timeout | null = null;
  private readonly endAll = () => this.closeAll();

  constructor(@Inject(CONFIG) private readonly config: GatewayEnv) {
    // Ahead of the HTTP drain (bootstrapService listens for the same signals later).
    process.once('SIGTERM', this.endAll);
    process.once('SIGINT', this.endAll);
  }

  /** Starts an SSE response, or throws 503 when this process holds as many as it may. */
  open(reply: FastifyReply): SseStream {
    if (this.streams.size >= this.config.GANTRY_SSE_MAX_STREAMS) {
      void reply.header('retry-after', '5');
      throw new ApiError(ErrorCode.UNAVAILABLE, `this gateway holds ${this.streams.size} event streams, its limit; retry, or connect to another replica`);
    }
    const stream = SseStream.start(reply);
    this.streams.add(stream);
    openStreams.set(this.streams.size);
    if (!this.keepAlive) {
      this.keepAlive = setInterval(() => {
        for (const s of this.streams) s.comment('keep-alive');
      }, this.config.GANTRY_SSE_KEEPALIVE_MS);
      this.keepAlive.unref();
    }
    void stream.closed().then(() => {
      this.streams.delete(stream);
      openStreams.set(this.streams.size);
      if (this.streams.size === 0 && this.keepAlive) {
        clearInterval(this.keepAlive);
        this.keepAlive = null;
      }
    });
    return stream;
  }

  get size(): number {
    return this.streams.size;
  }

  closeAll(): void {
    for (const s of [...this.streams]) s.end();
  }

  onModuleDestroy(): void {
    process.off('SIGTERM', this.endAll);
    process.off('SIGINT', this.endAll);
    this.closeAll();
  }
}
