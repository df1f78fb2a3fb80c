import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { hash, timingSafeEqual } from 'node:crypto';
import { DataSource } from 'typeorm';
import { tokenStanding } from '@gantry/domain';
import { ApiTokenWithSecret, autocommit, loadApiTokensChangedSince } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import type { Logger } from '@gantry/platform';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { Principal } from './principal';

export const sha256 = (s: string) => hash('sha256', s, 'hex');

/** How long a secret found in no token is answered 401 without looking again, ms. */
const UNKNOWN_TTL_MS = 60_000;
/** Most such secrets remembered (the oldest go first). */
const UNKNOWN_MAX = 100_000;
/** Least time between the starts of two reads asked for by unknown secrets, ms: a flood of them costs at most 20 reads a second. */
const ON_DEMAND_GAP_MS = 50;

export type Authentication = { principal: Principal } | { refused: 'unknown' | 'expired' | 'revoked' };

/** Told of every token this replica learns or learns anew (a sync, a mint, a revocation here). */
export type TokenListener = (token: ApiTokenWithSecret) => void;

/**
 * Every token, in memory, on every gateway replica: authenticating a request costs a hash and a map
 * lookup, never a database round trip. Each replica reads the tokens changed since its last read
 * every GANTRY_TOKEN_SYNC_MS (an indexed read of nothing, usually), so a revocation reaches every
 * replica within that period plus one read. A secret it does not know waits for one read that
 * starts after the request arrived (so a token minted through another replica a moment ago is
 * found), and is then remembered as unknown for a minute: a flood of bad tokens shares those reads.
 * Listeners hear of every token learned, so that streams end with their token (TokenStreams).
 */
@Injectable()
export class TokenRegistry implements OnModuleInit, OnModuleDestroy {
  private readonly adminDigest: Buffer;
  private readonly byDigest = new Map<string, ApiTokenWithSecret>();
  private readonly byId = new Map<string, ApiTokenWithSecret>();
  private readonly listeners = new Set<TokenListener>();
  private readonly unknown = new Map<string, number>();
  private horizon: string | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private lastStart = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    this.adminDigest = Buffer.from(sha256(config.GANTRY_ADMIN_TOKEN), 'hex');
  }

  async onModuleInit(): Promise<void> {
    await this.startSync();
    this.timer = setInterval(() => {
      if (!this.running) this.startSync().catch((err) => this.logger.warn({ err }, 'token sync failed; next tick retries'));
    }, this.config.GANTRY_TOKEN_SYNC_MS);
    this.timer.unref();
  }

  onModuleDestroy(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Who `secret` is, or why it is refused, from memory alone (a hash and a map lookup); null when
   * this replica has not heard of it and has not found it unknown lately: then only
   * authenticateAfterRead can tell.
   */
  authenticateKnown(secret: string, address: string | null): Authentication | null {
    const digest = sha256(secret);
    // Comparing digests keeps the comparison constant-time whatever the token's length.
    if (timingSafeEqual(Buffer.from(digest, 'hex'), this.adminDigest)) return { principal: { owner: 'admin', role: 'operator', tokenId: null, address } };
    const token = this.byDigest.get(digest);
    if (token) return this.judge(token, address);
    return (this.unknown.get(digest) ?? 0) > Date.now() ? { refused: 'unknown' } : null;
  }

  /** Who `secret` is after one read of the tokens that started after this call (shared with every caller meanwhile). 503 when the database cannot be asked. */
  async authenticateAfterRead(secret: string, address: string | null): Promise<Authentication> {
    const digest = sha256(secret);
    try {
      await this.syncAfterNow();
    } catch (err) {
      this.logger.warn({ err }, 'could not read tokens to check an unknown one');
      throw new ApiError(ErrorCode.UNAVAILABLE, 'the token cannot be checked now; try again').retryAfter(1);
    }
    const token = this.byDigest.get(digest);
    if (token) return this.judge(token, address);
    this.rememberUnknown(digest);
    return { refused: 'unknown' };
  }

  /** The token with this id as this replica knows it now; undefined when it knows none. */
  byTokenId(id: string): ApiTokenWithSecret | undefined {
    return this.byId.get(id);
  }

  /** Calls `listener` with every token learned from now on; returns the function that stops it. */
  onToken(listener: TokenListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Takes a token this replica has just written or read, so that it counts here at once. A
   * revocation is final: a copy read before it (a sync that started before the revoke committed)
   * does not undo it.
   */
  learn(token: ApiTokenWithSecret): void {
    const known = this.byId.get(token.id);
    const merged = known?.revokedAt && !token.revokedAt ? { ...token, revokedAt: known.revokedAt } : token;
    this.byDigest.set(merged.secretSha256, merged);
    this.byId.set(merged.id, merged);
    this.unknown.delete(merged.secretSha256);
    for (const listener of this.listeners) listener(merged);
  }

  /** Takes a revocation this replica has just written: it holds here at once, the other replicas learn it at their next read. */
  learnRevocation(id: string, revokedAt: Date): void {
    const known = this.byId.get(id);
    if (known && !known.revokedAt) this.learn({ ...known, revokedAt });
  }

  private judge(token: ApiTokenWithSecret, address: string | null): Authentication {
    const standing = tokenStanding(token, Date.now());
    if (standing !== 'valid') return { refused: standing };
    return { principal: { owner: token.owner, role: token.role, tokenId: token.id, address } };
  }

  private rememberUnknown(digest: string): void {
    if (this.unknown.size >= UNKNOWN_MAX) this.unknown.delete(this.unknown.keys().next().value!);
    this.unknown.set(digest, Date.now() + UNKNOWN_TTL_MS);
  }

  /**
   * Resolves after a read that started after this call: the one queued behind a running read (or
   * behind the gap since the last start), or a new one. Every caller meanwhile shares it.
   */
  private syncAfterNow(): Promise<void> {
    const wait = this.lastStart + ON_DEMAND_GAP_MS - Date.now();
    if (!this.running && !this.queued && wait <= 0) return this.startSync();
    this.queued ??= (this.running ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => new Promise((r) => setTimeout(r, Math.max(0, this.lastStart + ON_DEMAND_GAP_MS - Date.now()))))
      .then(() => {
        this.queued = null;
        return this.running ?? this.startSync();
      });
    return this.queued;
  }

  private startSync(): Promise<void> {
    this.lastStart = Date.now();
    const run = this.sync().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }

  private async sync(): Promise<void> {
    const changes = await loadApiTokensChangedSince(autocommit(this.ds), this.horizon);
    for (const t of changes.tokens) this.learn(t);
    this.horizon = changes.horizon;
  }
}
