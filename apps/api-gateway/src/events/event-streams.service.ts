import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { JobStreamEventView } from '@gantry/contracts';
import { JobState, isTerminal } from '@gantry/domain';
import {
  StreamFilter,
  StreamPosition,
  StreamedJobEvent,
  autocommit,
  compareStreamPositions,
  currentStreamPosition,
  listJobEvents,
  readJobEventStream,
  STREAM_ORIGIN,
} from '@gantry/persistence';
import { Principal } from '../auth/principal';
import { JobsService } from '../jobs/jobs.service';
import { toEventView } from '../jobs/job-view.mapper';
import { EventFollower, FollowSpec } from './event-follower';
import { JobEventTail } from './job-event-tail';
import { OpenStreams } from './open-streams';
import type { Logger } from '@gantry/platform';
import { SERVICE_LOGGER } from '@gantry/runtime';
import { SseStream } from './sse-stream';
import { encodeStreamPosition } from './stream-position-codec';

/** Live events one stream may hold while its client is slower than they come; then it re-reads (EventFollower). */
const MAX_BUFFERED = 1_000;

/** The event after which a job's stream ends: its move into a terminal state. */
export function endsJobStream(e: { type: string; toState?: string | null }): boolean {
  return e.type === 'STATE_CHANGED' && !!e.toState && isTerminal(e.toState as JobState);
}

export function toStreamEventView(e: StreamedJobEvent): JobStreamEventView {
  return { jobId: e.jobId, ...toEventView(e) };
}

const render = (e: StreamedJobEvent) => JSON.stringify(toStreamEventView(e));

/** The events of a job and of every visible job, as SSE streams and as pages (contract §4.5, ADR 0028). */
@Injectable()
export class EventStreamsService {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    private readonly jobs: JobsService,
    private readonly tail: JobEventTail,
    private readonly streams: OpenStreams,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * `GET /v1/jobs/{id}/events?follow=true`: every event after seq `afterSeq` (SSE id = seq), live
   * from then on; ends after the terminal event. A job that had ended when this was asked ends the
   * stream as soon as what is left has been sent.
   */
  async followJob(id: string, who: Principal, afterSeq: number, reply: FastifyReply): Promise<void> {
    const job = await this.jobs.get(id, who);
    const spec: FollowSpec<number> = {
      read: async (after, limit) =>
        (await listJobEvents(autocommit(this.ds), id, after, limit)).map((e) => ({
          ...e,
          jobId: id,
          owner: job.owner,
          queue: job.queue,
          position: { xid: '0', jobId: id, seq: e.seq },
        })),
      positionOf: (e) => e.seq,
      idOf: (e) => String(e.seq),
      isAfter: (e, last) => e.seq > last,
      // A job's seqs have no gaps: anything but the next one means the tail's view has a hole.
      isNext: (e, last) => e.seq === last + 1,
      isEnd: endsJobStream,
      render,
    };
    let follower: EventFollower<number> | null = null;
    // Listening starts before the backlog is read, so nothing falls between the two.
    const unlisten = await this.tail.listenToJob(id, (e) => follower?.offer(e));
    try {
      const stream = await this.streams.open(reply, who);
      follower = new EventFollower(spec, afterSeq, stream, MAX_BUFFERED, isTerminal(job.state));
      await this.runToEnd(follower, stream);
    } finally {
      unlisten();
    }
  }

  /**
   * `GET /v1/events?follow=true`: the events of every job the caller may see (operators: all;
   * users: their own), optionally of one queue, after `after` (or from now), in stream order.
   */
  async followAll(who: Principal, queue: string | undefined, after: StreamPosition | null, reply: FastifyReply): Promise<void> {
    const filter = this.filterFor(who, queue);
    const spec: FollowSpec<StreamPosition> = {
      read: (from, limit) => readJobEventStream(autocommit(this.ds), from, limit, filter),
      positionOf: (e) => e.position,
      idOf: (e) => encodeStreamPosition(e.position),
      isAfter: (e, last) => compareStreamPositions(e.position, last) > 0,
      isNext: () => true,
      isEnd: () => false,
      render,
    };
    let follower: EventFollower<StreamPosition> | null = null;
    // Events before the follower exists need not be kept: its first catch-up reads them from the database.
    const unlisten = await this.tail.listenToAll((e) => {
      if (matches(e, filter)) follower?.offer(e);
    });
    try {
      // "From now" is read after listening began, so it cannot be later than what the tail hands over.
      const start = after ?? (await currentStreamPosition(autocommit(this.ds)));
      const stream = await this.streams.open(reply, who);
      follower = new EventFollower(spec, start, stream, MAX_BUFFERED);
      await this.runToEnd(follower, stream);
    } finally {
      unlisten();
    }
  }

  /** Once the stream has started, a failure can only end it: the client reconnects with Last-Event-ID. */
  private async runToEnd(follower: EventFollower<unknown>, stream: SseStream): Promise<void> {
    try {
      await follower.run();
    } catch (err) {
      this.logger.warn({ err }, 'event stream failed; ended it (the client resumes with Last-Event-ID)');
      stream.end();
    }
  }

  /** `GET /v1/events` without follow: one page in stream order, from the beginning or from `after`. */
  async page(
    who: Principal,
    queue: string | undefined,
    after: StreamPosition | null,
    limit: number,
  ): Promise<{ items: JobStreamEventView[]; nextPosition: string }> {
    const from = after ?? STREAM_ORIGIN;
    const events = await readJobEventStream(autocommit(this.ds), from, limit, this.filterFor(who, queue));
    const last = events.length ? events[events.length - 1].position : from;
    return { items: events.map(toStreamEventView), nextPosition: encodeStreamPosition(last) };
  }

  private filterFor(who: Principal, queue: string | undefined): StreamFilter {
    return { owner: who.role === 'operator' ? undefined : who.owner, queue };
  }
}

function matches(e: StreamedJobEvent, f: StreamFilter): boolean {
  return (f.owner === undefined || e.owner === f.owner) && (f.queue === undefined || e.queue === f.queue);
}
