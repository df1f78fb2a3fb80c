import { Controller, Get, Inject, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { autocommit, listAuditEntries } from '@gantry/persistence';
import { BearerAuthGuard } from '../auth/bearer-auth.guard';
import { Roles } from '../auth/roles.decorator';
import { CursorCodec } from '../http/cursor-codec';
import { AuditPage, ListAuditQuery } from './audit.dto';

const isAuditCursor = (v: unknown): v is { a: number } => typeof v === 'object' && v !== null && Number.isInteger((v as { a?: unknown }).a);

/** The audit log of operators' changes, newest first. */
@ApiTags('audit')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Roles('operator')
@Controller('v1/audit')
export class AuditController {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CursorCodec) private readonly cursors: CursorCodec,
  ) {}

  @Get()
  @ApiOperation({ operationId: 'audit.list', summary: "Operators' changes, newest first: who, what, when, from which address" })
  @ApiOkResponse({ type: AuditPage, description: 'An entry written during the listing does not appear in it (it is newer than the first page)' })
  @ApiResponse({ status: 400, description: 'A bad limit, or a malformed or altered cursor' })
  @ApiResponse({ status: 401, description: 'Missing, unknown, expired or revoked token' })
  @ApiResponse({ status: 403, description: 'Not an operator' })
  @ApiResponse({ status: 429, description: "The token's request budget is spent (Retry-After)" })
  async list(@Query() q: ListAuditQuery): Promise<AuditPage> {
    const limit = q.limit ?? 50;
    const before = q.cursor ? this.cursors.decode(q.cursor, isAuditCursor).a : null;
    const rows = await listAuditEntries(autocommit(this.ds), before, limit + 1);
    const page = rows.slice(0, limit);
    return {
      items: page.map((e) => ({
        id: e.id,
        at: e.at.toISOString(),
        actor: e.actor,
        address: e.address,
        action: e.action,
        target: e.target,
        details: e.details,
      })),
      nextCursor: rows.length > limit ? this.cursors.encode({ a: page[page.length - 1].id }) : null,
    };
  }
}
