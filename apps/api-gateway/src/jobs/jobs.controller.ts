import { Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { CreateJobDto, JobEventPage, JobView } from '@gantry/contracts';
import { ApiError, ErrorCode } from '@gantry/platform';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { CursorCodec } from '../http/cursor-codec';
import { toEventView, toJobView } from './job-view.mapper';
import { JobsService } from './jobs.service';

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
@UseGuards(BearerAuthGuard)
@Controller('v1/jobs')
export class JobsController {
  constructor(private readonly jobs: JobsService, @Inject(CursorCodec) private readonly cursors: CursorCodec) {}

  @Post()
  @HttpCode(201)
  @ApiOkResponse({ type: JobView })
  async create(@Body() dto: CreateJobDto, @CurrentPrincipal() who: Principal, @Res({ passthrough: true }) res: Response): Promise<JobView> {
    const job = await this.jobs.create(dto, who);
    res.location(`/v1/jobs/${job.id}`);
    return toJobView(job);
  }

  @Get(':id')
  @ApiOkResponse({ type: JobView })
  async get(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<JobView> {
    return toJobView(await this.jobs.get(id, who));
  }

  @Post(':id/cancel')
  @ApiOkResponse({ type: JobView, description: '202 when the intent is recorded; 200 when the job had already ended' })
  async cancel(@Param('id') id: string, @CurrentPrincipal() who: Principal, @Res({ passthrough: true }) res: Response): Promise<JobView> {
    const { job, accepted } = await this.jobs.cancel(id, who);
    res.status(accepted ? 202 : 200);
    return toJobView(job);
  }

  @Get(':id/events')
  @ApiQuery({ name: 'cursor', required: false })
  @ApiQuery({ name: 'limit', required: false, description: '1..500, default 100' })
  @ApiOkResponse({ type: JobEventPage })
  async events(
    @Param('id') id: string,
    @CurrentPrincipal() who: Principal,
    @Query('cursor') cursor?: string,
    @Query('limit') rawLimit?: string,
  ): Promise<JobEventPage> {
    const limit = parseLimit(rawLimit, 100, 500);
    const after = cursor ? this.cursors.decode(cursor, isSeqCursor) : { jobId: id, seq: 0 };
    if (after.jobId !== id) throw new ApiError(ErrorCode.INVALID_CURSOR, 'cursor belongs to another job');
    const events = await this.jobs.events(id, who, after.seq, limit + 1);
    const page = events.slice(0, limit);
    const nextCursor = events.length > limit ? this.cursors.encode({ jobId: id, seq: page[page.length - 1].seq }) : null;
    return { items: page.map(toEventView), nextCursor };
  }
}
