import { Controller, Get, Param, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { JobLogsService } from './job-logs.service';
import { LogsQuery } from './logs.query';

/** A job's logs, read from the node that ran it (contract 4.4, ADR 0021). */
@ApiTags('jobs')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller('v1/jobs')
export class LogsController {
  constructor(private readonly logs: JobLogsService) {}

  @Get(':id/logs')
  @ApiOperation({ operationId: 'jobs.logs' })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description:
      'What one rank of one attempt wrote (stdout and stderr), as its node keeps it: the newest GANTRY_AGENT_LOG_MAX_BYTES (64 MiB) at most, ' +
      "for as long as the node's retention. Default: the latest attempt, rank 0, the whole log. With follow=true the body stays open while the " +
      "attempt runs and ends once it has ended, or within 1 s of its token's revocation or expiry. Same rights as GET /v1/jobs/{id}: another " +
      "owner's job is 404. 503 when the node's agent does not answer, or this gateway follows GANTRY_LOG_MAX_STREAMS logs already; 429 when " +
      'the token holds GANTRY_STREAMS_PER_TOKEN (32) streams and log follows already.',
    content: { 'text/plain': { schema: { type: 'string', maxLength: 1_000_000_000 } } },
  })
  async read(@Param('id') id: string, @Query() q: LogsQuery, @CurrentPrincipal() who: Principal, @Res() reply: FastifyReply): Promise<void> {
    await this.logs.read(id, who, q, reply);
  }
}
