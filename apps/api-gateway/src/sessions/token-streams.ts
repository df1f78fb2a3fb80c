import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Counter } from 'prom-client';
import { msUntilTokenEnds, tokenStanding } from '@gantry/domain';
import { TokenStreamSlots } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import type { Logger } from '@gantry/platform';
import { CONFIG, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import { Principal } from '../auth/principal';
import { TokenRegistry } from '../auth/token-registry';
import { GatewayEnv } from '../config';

/** How long a stream counts against its token in Redis without a renewal, ms: the streams of a replica that died stop counting this long after. */
const SLOT_LEASE_MS = 30_000;
/** How often this replica renews the leases of its open streams, ms (three renewals a lease: one lost to a slow Redis changes nothing). */
const RENEW_EVERY_MS = 10_000;
/** Retry-After of a follow refused for the token's stream limit, s: a stream frees its slot only when its client or its job ends it. */
const LIMITED_RETRY_AFTER_S = 5;
/** Longest delay setTimeout takes; a later expiry is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const slotDecisions = new Counter({
  name: 'gantry_stream_slot_decisions_total',
  help: 'Streams (event streams and log follows) judged by the per-token limit GANTRY_STREAMS_PER_TOKEN: allowed, limited (429), or unchecked (Redis did not answer; let through)',
  labelNames: ['outcome'],
});
const endedWithToken = new Counter({
  name: 'gantry_streams_ended_by_token_total',
  help: 'Streams this gateway ended because their token stopped standing: revoked or expired',
  labelNames: ['reason'],
});

/** One open stream's place with its token. */
export interface TokenStreamLease {
  /** Gives the place back (idempotent); the stream's owner calls it once the stream is over. */
  release(): void;
}

/** A token's streams on this replica: each stream's end, by its member id in the shared count. */
interface TokenSessions {
  ends: Map<string, () => void>;
  /** Wakes when the token's expiry comes (null: it never expires). */
  expiry: NodeJS.Timeout | null;
}

/**
 * The open streams of each token (contract §5.3, ADR 0036), event streams and log follows alike:
 * - each stream is tied to the token it was opened with, and ended (a clean end of its body) when
 *   the token stops standing: a revocation this replica learns (its own, or another replica's
 *   through TokenRegistry's sync, within GANTRY_TOKEN_SYNC_MS and one read), or the token's
 *   expiresAt passing (a timer per token with open streams);
 * - a token holds at most GANTRY_STREAMS_PER_TOKEN open at once across every replica, counted in
 *   Redis (TokenStreamSlots) under leases this replica renews, so what a crashed replica held stops
 *   counting one lease later. A Redis that does not answer lets the stream through (counted as
 *   unchecked): the per-process caps (GANTRY_SSE_MAX_STREAMS, GANTRY_LOG_MAX_STREAMS) still hold.
 * The admin token (no id; it changes only with the configuration) counts as the token `admin`.
 */
@Injectable()
export class TokenStreams implements OnModuleInit, OnModuleDestroy {
  private readonly slots: TokenStreamSlots;
  private readonly byToken = new Map<string, TokenSessions>();
  private renewTimer: NodeJS.Timeout | null = null;
  private stopListening: (() => void) | null = null;

  constructor(
    private readonly registry: TokenRegistry,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    this.slots = new TokenStreamSlots(redis, SLOT_LEASE_MS);
  }

  onModuleInit(): void {
    this.stopListening = this.registry.onToken((t) => this.judge(t.id));
    this.renewTimer = setInterval(() => void this.renew(), RENEW_EVERY_MS);
    this.renewTimer.unref();
  }

  onModuleDestroy(): void {
    this.stopListening?.();
    if (this.renewTimer) clearInterval(this.renewTimer);
    for (const s of this.byToken.values()) if (s.expiry) clearTimeout(s.expiry);
  }

  /**
   * A place for one more stream of `who`'s token; `end` ends the stream when the token stops
   * standing. 401 when it already has, 429 (Retry-After) when the token holds
   * GANTRY_STREAMS_PER_TOKEN streams already.
   */
  async open(who: Principal, end: () => void): Promise<TokenStreamLease> {
    const key = who.tokenId ?? 'admin';
    this.assertStanding(who.tokenId);
    const member = randomUUID();
    try {
      const grant = await this.slots.acquire(key, member, this.config.GANTRY_STREAMS_PER_TOKEN);
      slotDecisions.inc({ outcome: grant.granted ? 'allowed' : 'limited' });
      if (!grant.granted) {
        throw new ApiError(
          ErrorCode.RATE_LIMITED,
          `this token holds ${grant.open} open streams (event streams and log follows), its limit (GANTRY_STREAMS_PER_TOKEN); close one, or try again later`,
        ).retryAfter(LIMITED_RETRY_AFTER_S);
      }
    } catch (e) {
      if (e instanceof ApiError) throw e;
      slotDecisions.inc({ outcome: 'unchecked' });
      this.logger.warn({ err: e }, "could not count the token's streams in Redis; let the stream through");
    }
    const lease = this.hold(key, member, end);
    try {
      // The token may have been revoked while Redis answered: then nothing was ever sent on this stream.
      this.assertStanding(who.tokenId);
    } catch (e) {
      lease.release();
      throw e;
    }
    return lease;
  }

  /** Streams of `tokenId` open on this replica (for tests and diagnostics). */
  openFor(tokenId: string | null): number {
    return this.byToken.get(tokenId ?? 'admin')?.ends.size ?? 0;
  }

  private hold(key: string, member: string, end: () => void): TokenStreamLease {
    let sessions = this.byToken.get(key);
    if (!sessions) {
      sessions = { ends: new Map(), expiry: null };
      this.byToken.set(key, sessions);
      this.armExpiry(key, sessions);
    }
    sessions.ends.set(member, end);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const s = this.byToken.get(key);
        if (s?.ends.delete(member) && s.ends.size === 0) {
          if (s.expiry) clearTimeout(s.expiry);
          this.byToken.delete(key);
        }
        this.slots.release(key, member).catch((err) => this.logger.warn({ err }, "could not release a stream's slot in Redis; its lease runs out"));
      },
    };
  }

  private assertStanding(tokenId: string | null): void {
    const token = tokenId === null ? undefined : this.registry.byTokenId(tokenId);
    const standing = token ? tokenStanding(token, Date.now()) : 'valid';
    if (standing !== 'valid') throw new ApiError(ErrorCode.UNAUTHENTICATED, standing === 'revoked' ? 'token revoked' : 'token expired');
  }

  /** Ends every stream of the token if it no longer stands; else waits for its expiry again. */
  private judge(key: string): void {
    const sessions = this.byToken.get(key);
    if (!sessions) return;
    const token = this.registry.byTokenId(key);
    const standing = token ? tokenStanding(token, Date.now()) : 'valid';
    if (standing === 'valid') {
      this.armExpiry(key, sessions);
      return;
    }
    if (sessions.expiry) clearTimeout(sessions.expiry);
    this.byToken.delete(key);
    endedWithToken.inc({ reason: standing }, sessions.ends.size);
    for (const [member, end] of sessions.ends) {
      end();
      this.slots.release(key, member).catch(() => undefined);
    }
  }

  private armExpiry(key: string, sessions: TokenSessions): void {
    if (sessions.expiry) clearTimeout(sessions.expiry);
    sessions.expiry = null;
    const token = this.registry.byTokenId(key);
    const ms = token ? msUntilTokenEnds(token, Date.now()) : null;
    if (ms === null) return;
    sessions.expiry = setTimeout(() => this.judge(key), Math.min(ms, MAX_TIMER_MS));
    sessions.expiry.unref();
  }

  private async renew(): Promise<void> {
    const members = new Map([...this.byToken].map(([key, s]) => [key, [...s.ends.keys()]]));
    try {
      await this.slots.renew(members);
    } catch (err) {
      this.logger.warn({ err }, "could not renew the leases of this replica's streams in Redis; the next round retries");
    }
  }
}
