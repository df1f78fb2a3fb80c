import { Controller, Get, Headers, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiHeader, ApiOkResponse, ApiProduces, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { JobStreamEventPage, JobStreamEventView } from '@gantry/contracts';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { EventStreamsService } from './event-streams.service';
import { EventsQuery } from './events.query';
import { SSE_DESCRIPTION } from './sse-description';
import { decodeStreamPosition } from './stream-position-codec';

/** The events of every job the caller may see: a page, or a live stream (contract §4.5, ADR 0028). */
@ApiTags('events')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@ApiExtraModels(JobStreamEventView, JobStreamEventPage)
@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventStreamsService) {}

  @Get()
  @ApiProduces('application/json', 'text/event-stream')
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'With follow=true: resume after this event (its SSE id); wins over `after`',
    schema: { type: 'string', maxLength: 64 },
  })
  @ApiOkResponse({
    description: `Operators see every job's events, users their own, in one commit-safe order. Without follow: a page from the beginning or after \`after\`. ${SSE_DESCRIPTION} Without Last-Event-ID or \`after\` a stream starts from now.`,
    content: {
      'application/json': { schema: { $ref: getSchemaPath(JobStreamEventPage) } },
      'text/event-stream': {
        schema: {
          type: 'string',
          maxLength: 1_000_000_000,
          description: `id: <position>\\ndata: <JobStreamEvent as JSON>\\n\\n, repeated (${getSchemaPath(JobStreamEventView)})`,
        },
      },
    },
  })
  async list(
    @Query() q: EventsQuery,
    @CurrentPrincipal() who: Principal,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (q.follow === 'true') {
      const resume = lastEventId ?? q.after;
      const after = resume === undefined ? null : decodeStreamPosition(resume, lastEventId !== undefined ? 'Last-Event-ID' : 'after');
      await this.events.followAll(who, q.queue, after, reply);
      return;
    }
    const after = q.after === undefined ? null : decodeStreamPosition(q.after, 'after');
    void reply.send(await this.events.page(who, q.queue, after, q.limit ?? 100));
  }
}
