import 'reflect-metadata';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsPositive,
  IsString,
  Matches,
  Max,
  Min,
  MinLength,
  Validate,
  ValidationArguments,
  ValidatorConstraint,
  ValidatorConstraintInterface,
} from 'class-validator';
import { BACKFILL_MODES, BackfillMode } from '@gantry/domain';
import { StatefulServiceEnv } from '@gantry/platform';

/** A variable at least another one: `@Validate(AtLeastVariable, ['OTHER_NAME'], { message })`. */
@ValidatorConstraint({ name: 'atLeastVariable' })
class AtLeastVariable implements ValidatorConstraintInterface {
  validate(value: number, args: ValidationArguments): boolean {
    return value >= (args.object as Record<string, number>)[args.constraints[0] as string];
  }
}

export class GatewayEnv extends StatefulServiceEnv {
  /** Bearer token with role `operator`, owner `admin`; at least 32 characters. */
  @IsString({ message: 'GANTRY_ADMIN_TOKEN is required' })
  @MinLength(32, { message: 'GANTRY_ADMIN_TOKEN must be at least 32 characters' })
  GANTRY_ADMIN_TOKEN!: string;
  /**
   * The HMAC key that signs pagination cursors; at least 32 characters. A secret of its own, never
   * derived from another: a signed cursor is public, and must not let anyone test guesses of a key
   * that guards anything else.
   */
  @IsString({ message: 'GANTRY_CURSOR_SECRET is required (the key that signs pagination cursors)' })
  @MinLength(32, { message: 'GANTRY_CURSOR_SECRET must be at least 32 characters' })
  GANTRY_CURSOR_SECRET!: string;
  /** Half-life of past usage in fair share, hours, as the scheduler's (GET /v1/queues' fairShare, explain's FAIR_SHARE; ADR 0038). */
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be a number of hours' })
  @IsPositive({ message: 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be more than 0' })
  @Max(87_600, { message: 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be at most 87600 (ten years)' })
  GANTRY_FAIRSHARE_HALF_LIFE_HOURS: number = 168;
  /** The scheduler's backfill (ADR 0008), which explain's estimate and BACKFILL_WINDOW model; set it as the scheduler's. */
  @IsIn(BACKFILL_MODES as BackfillMode[], { message: `GANTRY_SCHEDULER_BACKFILL must be one of ${BACKFILL_MODES.join(', ')}` })
  GANTRY_SCHEDULER_BACKFILL: BackfillMode = 'strict';
  /** How long an Idempotency-Key is remembered, ms (24 h). */
  @IsInt() @Min(1000) GANTRY_IDEMPOTENCY_TTL_MS: number = 24 * 60 * 60 * 1000;
  /** Most creates written in one transaction (group commit; a lone create is never delayed). */
  @IsInt() @Min(1) @Max(1000) GANTRY_CREATE_BATCH_MAX: number = 200;
  /** Create transactions in flight at once; creates arriving meanwhile form the next batch. */
  @IsInt() @Min(1) @Max(32) GANTRY_CREATE_CONCURRENCY: number = 4;
  /** The brokers agents connect to, as enrollment answers tell them (default: KAFKA_BROKERS). */
  @IsOptional()
  @Matches(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/, { message: 'GANTRY_AGENT_KAFKA_BROKERS must be a comma-separated list of host:port' })
  GANTRY_AGENT_KAFKA_BROKERS?: string;
  /**
   * The key that signs real agents' Kafka tokens (ES256: an EC P-256 private key, PEM, PKCS#8), whose
   * public half the brokers validate SASL/OAUTHBEARER tokens with (ADR 0034). With it the gateway
   * answers POST /v1/nodes/{id}/kafka-token and gives each node's principal its one group ACL (its
   * Kafka principal needs ALTER on the cluster); unset: no tokens, and agents connect without SASL.
   */
  @IsOptional()
  @Matches(/-----BEGIN PRIVATE KEY-----/, { message: 'GANTRY_AGENT_KAFKA_TOKEN_KEY must be a PEM (PKCS#8) EC P-256 private key' })
  GANTRY_AGENT_KAFKA_TOKEN_KEY?: string;
  /**
   * Lifetime of an agent's Kafka token, ms (1 h). Agents renew past half of it, so they ride out a
   * gateway outage of half of it (longer, and their beats stop: they fence). A revoked node's
   * connections end when its last token does (its group access ends at once).
   */
  @IsInt() @Min(30_000) @Max(86_400_000) GANTRY_AGENT_KAFKA_TOKEN_TTL_MS: number = 3_600_000;
  /** How often the event tail reads new job events while anyone follows a stream, ms (ADR 0028). */
  @IsInt() @Min(10) @Max(10_000) GANTRY_STREAM_POLL_MS: number = 250;
  /** Interval of the SSE comment that keeps idle streams open through proxies, ms. */
  @IsInt() @Min(1000) GANTRY_SSE_KEEPALIVE_MS: number = 15_000;
  /** Most event streams one gateway process holds open; past it a follow is a 503 with Retry-After. */
  @IsInt() @Min(1) GANTRY_SSE_MAX_STREAMS: number = 10_000;
  /** Most log follows (GET /v1/jobs/{id}/logs?follow=true) one gateway process relays at once; past it a follow is a 503 with Retry-After (ADR 0021). */
  @IsInt() @Min(1) GANTRY_LOG_MAX_STREAMS: number = 1_000;
  /**
   * Most streams (event streams and log follows together) one token holds open at once, counted
   * across every replica; past it a follow is a 429 with Retry-After (ADR 0036).
   */
  @IsInt() @Min(1) GANTRY_STREAMS_PER_TOKEN: number = 32;
  /** Publish every job event to gantry.job-events.v1 (one leader among the gateways does it). */
  @IsIn(['true', 'false']) GANTRY_PUBLISH_JOB_EVENTS: 'true' | 'false' = 'true';
  /**
   * Requests per second one client address (an IPv4 address, an IPv6 /64) may make without a valid
   * token, sustained, and at once; past it they are 429 instead of 401. Per replica (ADR 0036).
   */
  @IsInt() @Min(1) GANTRY_ANON_RATE_LIMIT_RPS: number = 20;
  /** Requests per second a `user` token may make, sustained (token bucket refill rate). */
  @IsInt() @Min(1) GANTRY_RATE_LIMIT_RPS: number = 1000;
  /** Requests a `user` token may make at once (token bucket size). */
  @IsInt() @Min(1) GANTRY_RATE_LIMIT_BURST: number = 2000;
  /** Requests per second an `operator` token may make, sustained. */
  @IsInt() @Min(1) GANTRY_OPERATOR_RATE_LIMIT_RPS: number = 5000;
  /** Requests an `operator` token may make at once. */
  @IsInt() @Min(1) GANTRY_OPERATOR_RATE_LIMIT_BURST: number = 10000;
  /** Longest a create may wait for its statement to start before it is refused with a 503, ms. */
  @IsInt() @Min(1) GANTRY_ADMISSION_WAIT_MS: number = 2000;
  /**
   * New creates are refused at once with a 503 while the oldest waiting create has waited longer
   * than this for its statement (ms); creates already waiting still run until
   * GANTRY_ADMISSION_WAIT_MS. Keeps what is accepted under overload near this wait. 0 turns it off.
   */
  @IsInt() @Min(0) GANTRY_SHED_CREATE_WAIT_MS: number = 250;
  /** Most creates waiting for a statement at once; more are refused with a 503. */
  @IsInt() @Min(1) GANTRY_ADMISSION_BACKLOG_MAX: number = 10_000;
  /**
   * Creates are refused with a 503 while the gateway's event loop runs this late on average (ms,
   * measured every GANTRY_SHED_SAMPLE_MS by @fastify/under-pressure): past it requests queue in the
   * process itself, where GANTRY_ADMISSION_WAIT_MS cannot see them. 0 turns it off.
   */
  @IsInt() @Min(0) GANTRY_SHED_EVENT_LOOP_DELAY_MS: number = 100;
  /** How often the event loop's delay is measured for GANTRY_SHED_EVENT_LOOP_DELAY_MS, ms. */
  @IsInt() @Min(10) @Max(5000) GANTRY_SHED_SAMPLE_MS: number = 250;
  /**
   * Creates are let in only while fewer than an adaptive limit are in progress; the rest get a 503
   * at once, before their token's budget, body or statement cost anything. The limit shrinks when a
   * create takes longer than this (ms, from its arrival to its answer) and grows while they answer
   * in time (libs/domain, concurrency-limit.ts; ADR 0017). 0 turns it off.
   */
  @IsInt() @Min(0) GANTRY_CREATE_LATENCY_TARGET_MS: number = 200;
  /** The adaptive limit's lower bound: at least this many creates in progress are always let in. */
  @IsInt() @Min(1) GANTRY_CREATE_INFLIGHT_MIN: number = 64;
  /** The adaptive limit's upper bound, where it starts; at least GANTRY_CREATE_INFLIGHT_MIN. */
  @IsInt()
  @Min(1)
  @Validate(AtLeastVariable, ['GANTRY_CREATE_INFLIGHT_MIN'], { message: 'GANTRY_CREATE_INFLIGHT_MAX must be at least GANTRY_CREATE_INFLIGHT_MIN' })
  GANTRY_CREATE_INFLIGHT_MAX: number = 1024;
  /** How often each replica reads the tokens changed since its last read (revocations, new tokens), ms. */
  @IsInt() @Min(50) @Max(500) GANTRY_TOKEN_SYNC_MS: number = 250;
  /** How long a finished job (and its events) is kept, ms (7 days). At least GANTRY_IDEMPOTENCY_TTL_MS: a replayed key must find its job. */
  @IsInt()
  @Min(1000)
  @Validate(AtLeastVariable, ['GANTRY_IDEMPOTENCY_TTL_MS'], {
    message: 'GANTRY_JOB_RETENTION_MS must be at least GANTRY_IDEMPOTENCY_TTL_MS (a replayed key must find its job)',
  })
  GANTRY_JOB_RETENTION_MS: number = 7 * 24 * 60 * 60 * 1000;
  /** How often expired idempotency keys, then finished jobs past their retention, are deleted, ms. */
  @IsInt() @Min(100) GANTRY_RETENTION_SWEEP_MS: number = 60_000;
  /** How long usage records and the hourly rollup are kept, days (ADR 0037): long after their jobs are deleted. */
  @IsInt() @Min(1) @Max(36_500) GANTRY_USAGE_RETENTION_DAYS: number = 400;

  override problems(given: ReadonlySet<string>): string[] {
    const problems = super.problems(given);
    // One secret reused for another would make a leak of either a leak of both.
    for (const other of ['GANTRY_ADMIN_TOKEN', 'GANTRY_NODE_CREDENTIAL_SECRET'] as const) {
      if (this.GANTRY_CURSOR_SECRET === this[other]) problems.push(`GANTRY_CURSOR_SECRET must not be the same as ${other}`);
    }
    return problems;
  }
}
