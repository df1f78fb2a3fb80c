import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiHeader, ApiOkResponse, ApiProduces, ApiQuery, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CreateJobDto, DependencyView, JobEventPage, JobExplanationView, JobPage, JobView } from '@gantry/contracts';
import { requestTraceHeaders } from '@gantry/messaging';
import type { JobRecord } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { canonicalSha256 } from '../http/canonical-json';
import { CursorCodec } from '../http/cursor-codec';
import { ListJobsQuery } from './list-jobs.query';
import { toEventView, toJobView } from './job-view.mapper';
import { JobsService } from './jobs.service';
import { JobExplainService } from './job-explain.service';
import { EventStreamsService } from '../events/event-streams.service';
import { SSE_DESCRIPTION } from '../events/sse-description';
import { decodeSeq } from '../events/stream-position-codec';

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

const isListCursor = (v: unknown): v is { t: number; i: string; f: string } =>
  typeof v === 'object' &&
  v !== null &&
  Number.isFinite((v as { t?: unknown }).t) &&
  typeof (v as { i?: unknown }).i === 'string' &&
  typeof (v as { f?: unknown }).f === 'string';

const isSeqCursor = (v: unknown): v is { jobId: string; seq: number } =>
  typeof v === 'object' && v !== null && typeof (v as { seq?: unknown }).seq === 'number' && typeof (v as { jobId?: unknown }).jobId === 'string';

function parseLimit(raw: string | undefined, dflt: number, max: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > max) {
    throw new ApiError(ErrorCode.VALIDATION_FAILED, `limit must be an integer 1..${max}`, [{ field: 'limit', message: `must be an integer 1..${max}` }]);
  }
  return n;
}

@ApiTags('jobs')
@ApiBearerAuth()
@ApiExtraModels(JobEventPage)
@UseGuards(BearerAuthGuard)
@Controller('v1/jobs')
export class JobsController {
  constructor(
    private readonly jobs: JobsService,
    private readonly explainer: JobExplainService,
    @Inject(CursorCodec) private readonly cursors: CursorCodec,
    private readonly streams: EventStreamsService,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: '1..255 printable ASCII characters; a retry with the same key and body returns the same job',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]{1,255}$' },
  })
  @ApiCreatedResponse({ type: JobView, description: 'Created; 200 with Idempotent-Replayed: true for a replay' })
  async create(
    @Body() dto: CreateJobDto,
    @CurrentPrincipal() who: Principal,
    @Headers('idempotency-key') key: string | undefined,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<JobView> {
    if (key !== undefined && !IDEMPOTENCY_KEY.test(key)) {
      throw new ApiError(ErrorCode.VALIDATION_FAILED, 'Idempotency-Key must be 1..255 printable ASCII characters', [
        { field: 'Idempotency-Key', message: 'must be 1..255 printable ASCII characters' },
      ]);
    }
    // The hash is of the body as sent (keys sorted), so a retry that reorders keys is still a replay.
    const idem = key === undefined ? null : { key, bodySha256: canonicalSha256(req.body) };
    const { job, replayed } = await this.jobs.create(dto, who, idem, requestTraceHeaders(req.headers));
    void res.header('location', `/v1/jobs/${job.id}`);
    if (replayed) void res.status(200).header('idempotent-replayed', 'true');
    // What it depends on is what the body named (a replay's body is the same): no read on the create path.
    const dependsOn = (dto.dependsOn ?? [])
      .map((d) => ({ jobId: d.jobId.toLowerCase(), condition: d.condition }))
      .sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
    return (await this.views([job], new Map([[job.id, dependsOn]])))[0];
  }

  @Get()
  @ApiOkResponse({
    type: JobPage,
    description:
      'Ordered by (createdAt, id). A job that exists and matches the filter for the whole listing appears exactly once; one created meanwhile may or may not.',
  })
  async list(@Query() q: ListJobsQuery, @CurrentPrincipal() who: Principal): Promise<JobPage> {
    if (who.role !== 'operator' && q.owner !== undefined && q.owner !== who.owner) {
      throw new ApiError(ErrorCode.FORBIDDEN, 'owner= is for operators; users see their own jobs');
    }
    const filter = {
      owner: who.role === 'operator' ? q.owner : who.owner,
      queue: q.queue,
      state: q.state,
      ...(q.arrayOf ? { arrayOf: q.arrayOf.toLowerCase() } : {}),
    };
    const signature = canonicalSha256(filter).slice(0, 16);
    const limit = q.limit ?? 50;
    let after: { createdAt: Date; id: string } | null = null;
    if (q.cursor) {
      const c = this.cursors.decode(q.cursor, isListCursor);
      // A cursor is bound to its filter: reused with another filter it would skip or repeat jobs.
      if (c.f !== signature) throw new ApiError(ErrorCode.INVALID_CURSOR, 'cursor was issued for a different filter');
      after = { createdAt: new Date(c.t), id: c.i };
    }
    const rows = await this.jobs.list(filter, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: await this.views(page),
      nextCursor: rows.length > limit ? this.cursors.encode({ t: last.createdAt.getTime(), i: last.id, f: signature }) : null,
    };
  }

  @Get(':id')
  @ApiOkResponse({ type: JobView })
  async get(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<JobView> {
    return (await this.views([await this.jobs.get(id, who)]))[0];
  }

  @Get(':id/explain')
  @ApiOkResponse({
    type: JobExplanationView,
    description: 'Why a QUEUED job waits: every blocker, single changes that would let it start, an estimated start. 409 for a job in any other state',
  })
  async explain(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<JobExplanationView> {
    return this.explainer.explain(id, who);
  }

  @Post(':id/cancel')
  @ApiOkResponse({ type: JobView, description: '202 when the intent is recorded; 200 when the job had already ended' })
  async cancel(
    @Param('id') id: string,
    @CurrentPrincipal() who: Principal,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<JobView> {
    const { job, accepted } = await this.jobs.cancel(id, who, requestTraceHeaders(req.headers));
    void res.status(accepted ? 202 : 200);
    return (await this.views([job]))[0];
  }

  @Get(':id/events')
  @ApiProduces('application/json', 'text/event-stream')
  @ApiQuery({ name: 'cursor', required: false, schema: { type: 'string', maxLength: 1024 } })
  @ApiQuery({ name: 'limit', required: false, description: '1..500, default 100', schema: { type: 'integer', minimum: 1, maximum: 500, default: 100 } })
  @ApiQuery({
    name: 'follow',
    required: false,
    description: 'true: a live SSE stream that ends after the terminal event',
    schema: { type: 'string', enum: ['true', 'false'], default: 'false' },
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'With follow=true: the seq of the last event received; the stream resumes after it',
    schema: { type: 'string', pattern: '^[0-9]{1,10}$', maxLength: 10 },
  })
  @ApiOkResponse({
    description: `The job's events, oldest first. ${SSE_DESCRIPTION} Here the SSE id is the event's seq; the stream starts at seq 1 and ends after the job's terminal event.`,
    content: {
      'application/json': { schema: { $ref: getSchemaPath(JobEventPage) } },
      'text/event-stream': { schema: { type: 'string', maxLength: 1_000_000_000, description: 'id: <seq>, data: <JobStreamEvent as JSON>, repeated' } },
    },
  })
  async events(
    @Param('id') id: string,
    @CurrentPrincipal() who: Principal,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
    @Query('cursor') cursor?: string,
    @Query('limit') rawLimit?: string,
    @Query('follow') follow?: string,
  ): Promise<void> {
    const lastEventId = req.headers['last-event-id'] as string | undefined;
    if (follow !== undefined && follow !== 'true' && follow !== 'false') {
      throw new ApiError(ErrorCode.VALIDATION_FAILED, 'follow must be true or false', [{ field: 'follow', message: 'must be true or false' }]);
    }
    if (follow === 'true') {
      await this.streams.followJob(id, who, lastEventId === undefined ? 0 : decodeSeq(lastEventId, 'Last-Event-ID'), reply);
      return;
    }
    const limit = parseLimit(rawLimit, 100, 500);
    const after = cursor ? this.cursors.decode(cursor, isSeqCursor) : { jobId: id, seq: 0 };
    if (after.jobId !== id) throw new ApiError(ErrorCode.INVALID_CURSOR, 'cursor belongs to another job');
    const events = await this.jobs.events(id, who, after.seq, limit + 1);
    const page = events.slice(0, limit);
    const nextCursor = events.length > limit ? this.cursors.encode({ jobId: id, seq: page[page.length - 1].seq }) : null;
    const body: JobEventPage = { items: page.map(toEventView), nextCursor };
    void reply.send(body);
  }

  /** One job as the resource shows it, with what it depends on. */
  /**
   * Job views with what each depends on (one read for the page, or `dependsOn` where the caller
   * knows it: a create) and an array parent's children by state (one grouped read for the parents
   * among them, none when there are none).
   */
  private async views(jobs: JobRecord[], dependsOn?: Map<string, DependencyView[]>): Promise<JobView[]> {
    const [deps, children] = await Promise.all([
      dependsOn ?? this.jobs.dependenciesOf(jobs),
      this.jobs.arrayChildCounts(jobs.filter((j) => j.arraySize !== null).map((j) => j.id)),
    ]);
    return jobs.map((j) => toJobView(j, deps.get(j.id) ?? [], children.get(j.id)));
  }
}
