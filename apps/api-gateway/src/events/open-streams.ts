import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG } from '@gantry/runtime';
import type { FastifyReply } from 'fastify';
import { Principal } from '../auth/principal';
import { GatewayEnv } from '../config';
import { TokenStreams } from '../sessions/token-streams';
import { SseStream } from './sse-stream';

const openStreams = new Gauge({ name: 'gantry_sse_streams_open', help: 'Event streams (SSE) this gateway holds open' });

/**
 * Every event stream this process holds: a cap on their number (and, through TokenStreams, on
 * each token's, ended with the token), one timer for all their
 * keep-alives (an idle stream costs no timer of its own and no work between two keep-alives), and
 * their end at shutdown, so that draining HTTP does not wait on streams that would never finish.
 * A client reconnects to another replica with Last-Event-ID and misses nothing.
 */
@Injectable()
export class OpenStreams implements OnModuleDestroy {
  private readonly streams = new Set<SseStream>();
  /** Streams past the cap check, waiting for their token's place. */
  private opening = 0;
  private keepAlive: NodeJS.Timeout | null = null;
  private readonly endAll = () => this.closeAll();

  constructor(
    @Inject(CONFIG) private readonly config: GatewayEnv,
    private readonly tokens: TokenStreams,
  ) {
    // Ahead of the HTTP drain (bootstrapService listens for the same signals later).
    process.once('SIGTERM', this.endAll);
    process.once('SIGINT', this.endAll);
  }

  /**
   * Starts an SSE response for `who`, or throws: 503 when this process holds as many as it may,
   * 429 when `who`'s token holds as many as it may (TokenStreams).
   */
  async open(reply: FastifyReply, who: Principal): Promise<SseStream> {
    if (this.streams.size + this.opening >= this.config.GANTRY_SSE_MAX_STREAMS) {
      void reply.header('retry-after', '5');
      throw new ApiError(ErrorCode.UNAVAILABLE, `this gateway holds ${this.streams.size} event streams, its limit; retry, or connect to another replica`);
    }
    let stream: SseStream | null = null;
    this.opening++;
    let lease;
    try {
      lease = await this.tokens.open(who, () => stream?.end());
    } finally {
      this.opening--;
    }
    try {
      stream = SseStream.start(reply);
    } catch (e) {
      lease.release();
      throw e;
    }
    void stream.closed().then(() => lease.release());
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
