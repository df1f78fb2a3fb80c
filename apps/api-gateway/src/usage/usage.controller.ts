import { Controller, Get, Headers, Inject, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags, getSchemaPath, ApiExtraModels } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { checkUsageQuery, renderUsageCsv, toUsageRowView } from '@gantry/domain';
import { autocommit, loadUsageReport } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { UsageQuery, UsageReport, UsageRow } from './usage.dto';

/** Whether the client asked for CSV: text/csv named in Accept, not refused with q=0. */
function wantsCsv(accept: string | undefined): boolean {
  return (accept ?? '').split(',').some((part) => {
    const [type, ...params] = part
      .trim()
      .split(';')
      .map((s) => s.trim());
    return type.toLowerCase() === 'text/csv' && !params.some((p) => /^q=0(\.0*)?$/.test(p));
  });
}

/** Usage reports from the ledger (contract 5.4, ADR 0037). */
@ApiTags('usage')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@ApiExtraModels(UsageReport)
@Controller('v1/usage')
export class UsageController {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  @Get()
  @ApiOperation({
    operationId: 'usage.report',
    summary: "GPU- and CPU-seconds, attempts and jobs per bucket and group: a user sees their own, an operator everyone's",
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({
    description:
      "Rows in bucket then group order. The rows of any split of a range add up to the range's. With Accept: text/csv the same rows as CSV (RFC 4180, a header row, the grouped-by columns after start).",
    content: {
      'application/json': { schema: { $ref: getSchemaPath(UsageReport) } },
      'text/csv': { schema: { type: 'string', maxLength: 1_000_000_000 } },
    },
  })
  @ApiResponse({ status: 400, description: 'A bad date, from not before to, an unknown groupBy or granularity, or more buckets than allowed' })
  @ApiResponse({ status: 401, description: 'Missing, unknown, expired or revoked token' })
  @ApiResponse({ status: 429, description: "The token's request budget is spent (Retry-After)" })
  async report(
    @Query() q: UsageQuery,
    @CurrentPrincipal() who: Principal,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<UsageReport | string> {
    const check = checkUsageQuery(q);
    if (!check.ok) throw new ApiError(ErrorCode.VALIDATION_FAILED, check.problem);
    const cells = await loadUsageReport(autocommit(this.ds), check.range, who.role === 'operator' ? null : who.owner, new Date());
    const items: UsageRow[] = cells.map((c) => toUsageRowView(c, check.range.groupBy));
    if (!wantsCsv(accept)) return { items };
    void reply.header('content-type', 'text/csv; charset=utf-8; header=present');
    return renderUsageCsv(items, check.range.groupBy);
  }
}
