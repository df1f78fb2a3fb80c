import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { ApiError, ErrorCode } from '@gantry/platform';
import { CONFIG } from '@gantry/runtime';
import { Principal } from '../auth/principal';
import { GatewayEnv } from '../config';
import { TokenStreams } from '../sessions/token-streams';

const openLogStreams = new Gauge({ name: 'gantry_log_streams_open', help: 'Log follows (GET /v1/jobs/{id}/logs?follow=true) this gateway holds open' });

/** One follow being served: `end` finishes it (the client gets the end of the body). */
export interface LogStreamSlot {
  end(): void;
  release(): void;
}

/**
 * The log follows this process holds: a cap on their number (GANTRY_LOG_MAX_STREAMS; past it a
 * follow is a 503 with Retry-After, as for event streams, ADR 0028 and 0017), each token's place
 * among its streams (TokenStreams: 429 past GANTRY_STREAMS_PER_TOKEN, ended with the token), and
 * their end at shutdown so that draining HTTP does not wait on them. A client follows again with
 * tailLines.
 */
@Injectable()
export class OpenLogStreams implements OnModuleDestroy {
  private readonly ends = new Set<() => void>();
  /** Follows past the cap check, waiting for their token's place. */
  private opening = 0;
  private readonly endAll = () => this.closeAll();

  constructor(
    @Inject(CONFIG) private readonly config: GatewayEnv,
    private readonly tokens: TokenStreams,
  ) {
    process.once('SIGTERM', this.endAll);
    process.once('SIGINT', this.endAll);
  }

  /**
   * A slot for one follow of `who`, ended by `end` at shutdown or when the token stops standing;
   * throws 503 when this process holds as many as it may, 429 when the token does (TokenStreams).
   */
  async acquire(who: Principal, end: () => void): Promise<LogStreamSlot> {
    if (this.ends.size + this.opening >= this.config.GANTRY_LOG_MAX_STREAMS) {
      throw new ApiError(ErrorCode.UNAVAILABLE, `this gateway follows ${this.ends.size} logs, its limit; retry, or connect to another replica`).retryAfter(5);
    }
    this.opening++;
    let lease;
    try {
      lease = await this.tokens.open(who, end);
    } finally {
      this.opening--;
    }
    this.ends.add(end);
    openLogStreams.set(this.ends.size);
    return {
      end,
      release: () => {
        this.ends.delete(end);
        openLogStreams.set(this.ends.size);
        lease.release();
      },
    };
  }

  get size(): number {
    return this.ends.size;
  }

  closeAll(): void {
    for (const end of [...this.ends]) end();
  }

  onModuleDestroy(): void {
    process.off('SIGTERM', this.endAll);
    process.off('SIGINT', this.endAll);
    this.closeAll();
  }
}
