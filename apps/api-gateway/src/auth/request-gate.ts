import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import Redis from 'ioredis';
import { Counter } from 'prom-client';
import { RateLimitBuckets } from '@gantry/persistence';
import { ApiError, ErrorCode, ProblemDetailsFilter } from '@gantry/platform';
import { CONFIG, REDIS } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { translateUnavailable } from '../http/unavailable-errors';
import { RateLimits, TokenRateLimiter } from '../rate-limit/token-rate-limiter';
import { CreateAdmission } from '../http/create-admission';
import { Principal } from './principal';
import { TokenRegistry } from './token-registry';

const decisions = new Counter({
  name: 'gantry_rate_limit_decisions_total',
  help: 'Requests judged by the per-token rate limit: allowed, limited (429), or unchecked (Redis did not answer; let through)',
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
 * The gateway's `onRequest` hook for every `/v1/` route, before the body is read: for a create,
 * whether the door lets one more in (CreateAdmission; a 503 at once otherwise); who is calling
 * (401 for a missing, unknown, expired or revoked token; no database round trip, see TokenRegistry)
 * and whether the token has budget left (429 with Retry-After). Every answer past this point
 * carries RateLimit-Limit and RateLimit-Remaining. Roles are the guard's (BearerAuthGuard).
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

  constructor(private readonly tokens: TokenRegistry, @Inject(REDIS) redis: Redis, @Inject(CONFIG) config: GatewayEnv) {
    this.limiter = new TokenRateLimiter(new RateLimitBuckets(redis));
    this.problems = new ProblemDetailsFilter(translateUnavailable(config.GANTRY_ADMISSION_WAIT_MS));
    this.userLimits = { ratePerS: config.GANTRY_RATE_LIMIT_RPS, burst: config.GANTRY_RATE_LIMIT_BURST };
    this.operatorLimits = { ratePerS: config.GANTRY_OPERATOR_RATE_LIMIT_RPS, burst: config.GANTRY_OPERATOR_RATE_LIMIT_BURST };
    this.admission = new CreateAdmission(config.GANTRY_CREATE_LATENCY_TARGET_MS > 0
      ? { targetMs: config.GANTRY_CREATE_LATENCY_TARGET_MS, min: config.GANTRY_CREATE_INFLIGHT_MIN, max: config.GANTRY_CREATE_INFLIGHT_MAX, backoff: 0.9 }
      : null);
  }

  readonly onRequest = async (req: GatedRequest, reply: FastifyReply): Promise<FastifyReply | void> => {
    // Routes as declared: the ops endpoints, the docs and unknown paths (404) pass untouched.
    if (!req.routeOptions.url?.startsWith('/v1/') || NODE_SIGNED.has(req.routeOptions.url)) return;
    try {
      // Overload first: refusing here costs no Redis call, body parse or statement.
      if (isCreate(req)) {
        const leave = this.admission.enter();
        if (!leave) {
          shed.inc({ reason: 'in-flight' });
          throw new ApiError(ErrorCode.UNAVAILABLE, 'the gateway is overloaded; try again later').retryAfter(1);
        }
        reply.raw.once('close', leave);
      }
      const principal = await this.authenticate(req);
      req.principal = principal;
      const d = await this.limiter.take(principal.tokenId ?? 'admin', principal.role === 'operator' ? this.operatorLimits : this.userLimits);
      decisions.inc({ outcome: !d.checked ? 'unchecked' : d.allowed ? 'allowed' : 'limited' });
      void reply.header('ratelimit-limit', String(d.limit)).header('ratelimit-remaining', String(d.remaining));
      if (!d.allowed) throw new ApiError(ErrorCode.RATE_LIMITED, `this token's request budget is spent; try again in ${d.retryAfterS} s`).retryAfter(d.retryAfterS!);
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

  /** Who is calling, or the 401 (503 when an unknown token cannot be checked now). */
  async authenticate(req: FastifyRequest): Promise<Principal> {
    const match = BEARER.exec(req.headers.authorization ?? '');
    if (!match) throw new ApiError(ErrorCode.UNAUTHENTICATED, 'missing bearer token');
    const found = await this.tokens.authenticate(match[1], req.ip ?? null);
    if ('refused' in found) throw new ApiError(ErrorCode.UNAUTHENTICATED, REFUSED[found.refused]);
    return found.principal;
  }
}
