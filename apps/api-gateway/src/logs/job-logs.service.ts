import { Inject, Injectable } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { chooseLogTarget, logAttemptLive } from '@gantry/domain';
import { CommandSigner, signLogGrant } from '@gantry/messaging';
import { autocommit, findAttemptRankLocation, findJob } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import type { Logger } from '@gantry/platform';
import { COMMAND_SIGNER, SERVICE_LOGGER } from '@gantry/runtime';
import { Principal } from '../auth/principal';
import { JobsService } from '../jobs/jobs.service';
import { AgentUnreachable, requestAgentLog } from './agent-log-request';
import { LogsQuery } from './logs.query';
import { OpenLogStreams } from './open-log-streams';

/** How long a grant lets the gateway start reading: it is presented once, at once. */
const GRANT_TTL_MS = 60_000;
/** A follow whose agent has not answered with headers by then is given up (the agent waits up to 30 s for an attempt to start). */
const HEADERS_TIMEOUT_MS = 45_000;
/** Without follow: the longest silence in the body, ms. */
const IDLE_TIMEOUT_MS = 30_000;
/** How often a follow looks at its job (ended? moved to another attempt?), ms. */
const WATCH_MS = 5_000;
/** After the job says the attempt is over, how long the agent still has to send its last bytes and end the body itself, ms. */
const WATCH_GRACE_MS = 10_000;

/**
 * GET /v1/jobs/{id}/logs (contract 4.4, ADR 0021): the caller's rights are those of GET
 * /v1/jobs/{id} (a user reads only their own jobs' logs; others' are 404). The gateway finds the
 * node that ran the rank, signs a short grant for (job, attempt, node) and relays the agent's
 * text/plain body as it comes, at the client's pace: memory per request is the sockets' buffers.
 * A follow ends when the agent ends it (the attempt ended and its last bytes are sent), when the
 * client leaves, at shutdown, or at the latest WATCH_GRACE_MS after the job says the attempt is over
 * (the agent died or hangs).
 */
@Injectable()
export class JobLogsService {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    private readonly jobs: JobsService,
    private readonly streams: OpenLogStreams,
    @Inject(COMMAND_SIGNER) private readonly signer: CommandSigner,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  async read(id: string, who: Principal, q: LogsQuery, reply: FastifyReply): Promise<void> {
    const job = await this.jobs.get(id, who);
    const target = chooseLogTarget(job, { attempt: q.attempt, rank: q.rank });
    if (target.kind === 'invalid')
      throw new ApiError(ErrorCode.VALIDATION_FAILED, `${target.field}: ${target.message}`, [{ field: target.field, message: target.message }]);
    if (target.kind === 'not-started') throw new ApiError(ErrorCode.NOT_FOUND, `job ${id} has not started an attempt yet: it has no log`);
    const { attempt, rank } = target;
    const where = await findAttemptRankLocation(autocommit(this.ds), id, attempt, rank);
    if (!where) throw new ApiError(ErrorCode.NOT_FOUND, `attempt ${attempt} of job ${id} has no rank ${rank} on record`);
    if (!where.address || !where.logsPort) {
      throw new ApiError(
        ErrorCode.NOT_FOUND,
        `node ${where.nodeId}, which ran rank ${rank} of attempt ${attempt}, does not serve logs (its agent sends no address and logsPort)`,
      );
    }
    const follow = q.follow === 'true';
    // Until the relay starts, an end (the token revoked or expired, shutdown) is remembered and honoured then.
    let endedEarly = false;
    let finish: () => void = () => void (endedEarly = true);
    const slot = follow ? await this.streams.acquire(who, () => finish()) : null;
    let upstream: IncomingMessage;
    try {
      upstream = await requestAgentLog({
        address: where.address,
        port: where.logsPort,
        jobId: id,
        attempt,
        tailLines: q.tailLines,
        follow,
        grant: signLogGrant({ jobId: id, attempt, nodeId: where.nodeId, exp: Date.now() + GRANT_TTL_MS }, this.signer),
        headersTimeoutMs: HEADERS_TIMEOUT_MS,
        idleTimeoutMs: IDLE_TIMEOUT_MS,
      });
    } catch (e) {
      slot?.release();
      if (e instanceof AgentUnreachable) {
        throw new ApiError(
          ErrorCode.UNAVAILABLE,
          `the agent of node ${where.nodeId} (${where.address}:${where.logsPort}) does not answer: ${e.message}`,
        ).retryAfter(5);
      }
      throw e;
    }
    if (upstream.statusCode !== 200 || endedEarly) {
      slot?.release();
      upstream.resume();
      if (endedEarly) upstream.destroy();
      throw endedEarly
        ? new ApiError(ErrorCode.UNAVAILABLE, 'the follow was ended before it began (the token stopped standing, or the gateway is stopping)').retryAfter(1)
        : this.refusal(upstream.statusCode ?? 0, where.nodeId, attempt, rank);
    }
    this.relay(upstream, reply, follow ? { id, attempt, onEnd: () => slot!.release(), setFinish: (f) => (finish = f) } : null);
  }

  private refusal(status: number, nodeId: string, attempt: number, rank: number): ApiError {
    if (status === 404)
      return new ApiError(
        ErrorCode.NOT_FOUND,
        `node ${nodeId} holds no log of attempt ${attempt} rank ${rank} (it never started there, or the node's retention deleted it)`,
      );
    if (status === 503) return new ApiError(ErrorCode.UNAVAILABLE, `the agent of node ${nodeId} serves as many log streams as it may`).retryAfter(5);
    // 401 (a grant it did not accept: the agents' GANTRY_COMMAND_PUBLIC_KEY is not this gateway's key) or anything else: ours to fix.
    this.logger.error({ status, nodeId }, 'an agent refused a log request the gateway made');
    return new ApiError(ErrorCode.INTERNAL, `the agent of node ${nodeId} refused the request (${status})`);
  }

  private relay(
    upstream: IncomingMessage,
    reply: FastifyReply,
    follow: { id: string; attempt: number; onEnd: () => void; setFinish: (f: () => void) => void } | null,
  ): void {
    const headers = Object.fromEntries(Object.entries(reply.getHeaders()).filter(([, v]) => v !== undefined)) as Record<string, string | number | string[]>;
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...headers,
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-accel-buffering': 'no',
    });
    let watch: NodeJS.Timeout | null = null;
    let done = false;
    const finish = (complete: boolean) => {
      if (done) return;
      done = true;
      if (watch) clearInterval(watch);
      upstream.unpipe(res);
      upstream.destroy();
      // A body the agent broke off is broken off here too, so the client can tell it is incomplete.
      if (complete) res.end();
      else res.destroy();
      follow?.onEnd();
    };
    follow?.setFinish(() => finish(true));
    upstream.pipe(res, { end: false });
    upstream.once('end', () => finish(true));
    upstream.once('error', () => finish(false));
    upstream.once('aborted', () => finish(false));
    res.once('close', () => finish(false));
    if (follow) {
      let overSince: number | null = null;
      watch = setInterval(() => {
        void findJob(autocommit(this.ds), follow.id)
          .then((job) => {
            const live = job !== null && logAttemptLive(job, follow.attempt);
            if (live) overSince = null;
            else overSince ??= Date.now();
            if (overSince !== null && Date.now() - overSince >= WATCH_GRACE_MS) finish(true);
          })
          .catch(() => undefined);
      }, WATCH_MS);
      watch.unref();
    }
  }
}
