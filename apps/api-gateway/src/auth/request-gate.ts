import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Redis from 'ioredis';
import { Counter } from 'prom-client';
import { RateLimitBuckets } from '@gantry/persistence';
import { ApiError, ErrorCode, ProblemDetailsFilter } from '@gantry/platform';
import { CONFIG, REDIS } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { translateUnavailable } from '../http/unavailable-errors';
import { AnonymousRateLimiter } from '../rate-limit/anonymous-rate-limiter';
import { RateLimits, TokenRateLimiter } from '../rate-limit/token-rate-limiter';
import { CreateAdmission } from '../http/create-admission';
import { Principal } from './principal';
import { TokenRegistry } from './token-registry';

const decisions = new Counter({
  name: 'gantry_rate_limit_decisions_total',
  help: 'Requests judged by the per-token rate limit: allowed, limited (429), or unchecked (Redis did not answer; let through)',
  labelNames: ['outcome'],
});

const unauthenticated = new Counter({
  name: 'gantry_unauthenticated_requests_total',
  help: "Requests without a valid token: refused (401), or limited (429) past their address's GANTRY_ANON_RATE_LIMIT_RPS",
  labelNames: ['outcome'],
});

const BEARER = /^Bearer (\S+)$/;
const REFUSED: Record<'unknown' | 'expired' | 'revoked', string> = { unknown: 'unknown token', expired: 'token expired', revoked: 'token revoked' };

/** A request as the gate leaves it for the guard and controllers. */
export type GatedRequest = FastifyRequest & { principal?: Principal };

const shed = new Counter({
  name: 'gantry_creates_shed_total',
  help: 'Creates refused with 503 at the door because the gateway was overloaded: in-flight (as many creates in progress as the adaptive limit lets in) or event-loop (GANTRY_SHED_EVENT_LOOP_DELAY_MS)',
  labelNames: ['reason'],
});
const isCreate = (req: FastifyRequest) => req.method === 'POST' && req.routeOptions.url === '/v1/jobs';
/** Where a node proves its credential instead of a bearer token (NodeKafkaTokenController, ADR 0034): its own checks and limit. */
const NODE_SIGNED = new Set(['/v1/nodes/:id/kafka-token']);

/**
 * The gateway's `onRequest` hook for every `/v1/` route, before the body is read, in this order:
 * 1. who is calling: 401 for a missing, unknown, expired or revoked token, 429 past the caller's
 *    address's budget for such requests (AnonymousRateLimiter); it costs a hash and a map lookup,
 *    and a secret this replica has never seen a share of one read of the tokens (TokenRegistry),
 *    so a request without a valid token never reaches anything below (contract §5.3);
 * 2. for a create, whether the door lets one more in (CreateAdmission; a 503 at once otherwise);
 * 3. whether the token has budget left (429 with Retry-After); every answer past this point
 *    carries RateLimit-Limit and RateLimit-Remaining;
 * 4. for a create, whether the event loop is too late to take it (503).
 * Roles are the guard's (BearerAuthGuard).
 */
@Injectable()
export class RequestGate {
  private readonly limiter: TokenRateLimiter;
  private readonly problems: ProblemDetailsFilter;
  private readonly userLimits: RateLimits;
  private readonly operatorLimits: RateLimits;
  /** Whether creates are to be refused now (load shedding, see measureEventLoopPressure). */
  private pressured: () => boolean = () => false;
  private readonly admission: CreateAdmission;
  private readonly anonymous: AnonymousRateLimiter;

  constructor(
    private readonly tokens: TokenRegistry,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) config: GatewayEnv,
  ) {
    this.limiter = new TokenRateLimiter(new RateLimitBuckets(redis));
    this.problems = new ProblemDetailsFilter(translateUnavailable(config.GANTRY_ADMISSION_WAIT_MS));
    this.userLimits = { ratePerS: config.GANTRY_RATE_LIMIT_RPS, burst: config.GANTRY_RATE_LIMIT_BURST };
    this.operatorLimits = { ratePerS: config.GANTRY_OPERATOR_RATE_LIMIT_RPS, burst: config.GANTRY_OPERATOR_RATE_LIMIT_BURST };
    this.admission = new CreateAdmission(
      config.GANTRY_CREATE_LATENCY_TARGET_MS > 0
        ? { targetMs: config.GANTRY_CREATE_LATENCY_TARGET_MS, min: config.GANTRY_CREATE_INFLIGHT_MIN, max: config.GANTRY_CREATE_INFLIGHT_MAX, backoff: 0.9 }
        : null,
    );
    this.anonymous = new AnonymousRateLimiter({ ratePerS: config.GANTRY_ANON_RATE_LIMIT_RPS, burst: config.GANTRY_ANON_RATE_LIMIT_RPS });
  }

  readonly onRequest = async (req: GatedRequest, reply: FastifyReply): Promise<FastifyReply | void> => {
    // Routes as declared: the ops endpoints, the docs and unknown paths (404) pass untouched.
    if (!req.routeOptions.url?.startsWith('/v1/') || NODE_SIGNED.has(req.routeOptions.url)) return;
    try {
      const principal = await this.authenticate(req);
      req.principal = principal;
      // Overload: refusing here costs no Redis call, body parse or statement.
      if (isCreate(req)) {
        const leave = this.admission.enter();
        if (!leave) {
          shed.inc({ reason: 'in-flight' });
          throw new ApiError(ErrorCode.UNAVAILABLE, 'the gateway is overloaded; try again later').retryAfter(1);
        }
        reply.raw.once('close', leave);
      }
      const d = await this.limiter.take(principal.tokenId ?? 'admin', principal.role === 'operator' ? this.operatorLimits : this.userLimits);
      decisions.inc({ outcome: !d.checked ? 'unchecked' : d.allowed ? 'allowed' : 'limited' });
      void reply.header('ratelimit-limit', String(d.limit)).header('ratelimit-remaining', String(d.remaining));
      if (!d.allowed)
        throw new ApiError(ErrorCode.RATE_LIMITED, `this token's request budget is spent; try again in ${d.retryAfterS} s`).retryAfter(d.retryAfterS!);
      if (isCreate(req) && this.pressured()) {
        shed.inc({ reason: 'event-loop' });
        throw new ApiError(ErrorCode.UNAVAILABLE, 'the gateway is overloaded; try again later').retryAfter(1);
      }
    } catch (e) {
      this.problems.render(e, req, reply);
      return reply;
    }
  };

  /** Refuse creates while `pressured()` says so (main.ts wires it to the event loop's delay). */
  shedCreatesWhen(pressured: () => boolean): void {
    this.pressured = pressured;
  }

  /**
   * Who is calling, or the 401 (429 past the address's budget for requests without a valid token;
   * 503 when a secret this replica has never seen cannot be checked now).
   */
  async authenticate(req: FastifyRequest): Promise<Principal> {
    const address = req.ip ?? null;
    const match = BEARER.exec(req.headers.authorization ?? '');
    if (!match) {
      this.spendAnonymous(address);
      throw this.refused('missing bearer token');
    }
    const known = this.tokens.authenticateKnown(match[1], address);
    if (known && 'principal' in known) return known.principal;
    // Refused, or never seen here (a token minted through another replica a moment ago, or a
    // guess): it spends its address's budget before it may cost a read of the tokens.
    this.spendAnonymous(address);
    const found = known ?? (await this.tokens.authenticateAfterRead(match[1], address));
    if ('refused' in found) throw this.refused(REFUSED[found.refused]);
    return found.principal;
  }

  private spendAnonymous(address: string | null): void {
    const t = this.anonymous.take(address);
    if (t.allowed) return;
    unauthenticated.inc({ outcome: 'limited' });
    const s = Math.ceil(t.retryAfterMs / 1000);
    throw new ApiError(ErrorCode.RATE_LIMITED, `too many requests without a valid token from this address; try again in ${s} s`).retryAfter(s);
  }

  private refused(detail: string): ApiError {
    unauthenticated.inc({ outcome: 'refused' });
    return new ApiError(ErrorCode.UNAUTHENTICATED, detail);
  }
}
