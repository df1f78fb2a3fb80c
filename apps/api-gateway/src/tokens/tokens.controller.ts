import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ApiTokenRecord } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';
import { Roles } from '../auth/roles.decorator';
import { TokenService } from '../auth/token.service';
import { CursorCodec } from '../http/cursor-codec';
import { CreateTokenDto, ListTokensQuery, TokenInfoView, TokenPage, TokenView } from './create-token.dto';

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const toInfo = (t: ApiTokenRecord): TokenInfoView => ({
  id: t.id,
  owner: t.owner,
  role: t.role,
  description: t.description,
  createdAt: t.createdAt.toISOString(),
  expiresAt: iso(t.expiresAt),
  revokedAt: iso(t.revokedAt),
});
const isTokenCursor = (v: unknown): v is { t: number; i: string } =>
  typeof v === 'object' && v !== null && Number.isFinite((v as { t?: unknown }).t) && typeof (v as { i?: unknown }).i === 'string';

const UNAUTHENTICATED = { status: 401, description: 'Missing, unknown, expired or revoked token' } as const;
const FORBIDDEN = { status: 403, description: 'Not an operator' } as const;
const RATE_LIMITED = { status: 429, description: "The token's request budget is spent (Retry-After)" } as const;

@ApiTags('tokens')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Roles('operator')
@Controller('v1/tokens')
export class TokensController {
  constructor(
    private readonly tokens: TokenService,
    @Inject(CursorCodec) private readonly cursors: CursorCodec,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ operationId: 'tokens.create', summary: 'Mint a token; its secret is shown once' })
  @ApiCreatedResponse({ type: TokenView })
  @ApiResponse({ status: 400, description: 'A bad owner, role, description or expiresAt (not RFC 3339, or not in the future)' })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(FORBIDDEN)
  @ApiResponse(RATE_LIMITED)
  async create(@Body() dto: CreateTokenDto, @CurrentPrincipal() who: Principal): Promise<TokenView> {
    const expiresAt = dto.expiresAt === undefined ? null : new Date(dto.expiresAt);
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new ApiError(ErrorCode.VALIDATION_FAILED, 'expiresAt must be in the future', [{ field: 'expiresAt', message: 'must be in the future' }]);
    }
    const minted = await this.tokens.mint(who, { owner: dto.owner, role: dto.role, description: dto.description ?? null, expiresAt });
    return { ...toInfo(minted), token: minted.token };
  }

  @Get()
  @ApiOperation({ operationId: 'tokens.list', summary: 'Every token, revoked and expired ones included, without secrets' })
  @ApiOkResponse({ type: TokenPage, description: 'A token that exists for the whole listing appears exactly once' })
  @ApiResponse({ status: 400, description: 'A bad limit, or a malformed or altered cursor' })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(FORBIDDEN)
  @ApiResponse(RATE_LIMITED)
  async list(@Query() q: ListTokensQuery): Promise<TokenPage> {
    const limit = q.limit ?? 50;
    const c = q.cursor ? this.cursors.decode(q.cursor, isTokenCursor) : null;
    const rows = await this.tokens.list(c ? { createdAt: new Date(c.t), id: c.i } : null, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return { items: page.map(toInfo), nextCursor: rows.length > limit ? this.cursors.encode({ t: last.createdAt.getTime(), i: last.id }) : null };
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'tokens.revoke', summary: 'Revoke a token: every gateway replica refuses it (401) within a second. Repeating it is harmless' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiResponse({ status: 404, description: 'No such token' })
  @ApiResponse(UNAUTHENTICATED)
  @ApiResponse(FORBIDDEN)
  @ApiResponse(RATE_LIMITED)
  async revoke(@Param('id') id: string, @CurrentPrincipal() who: Principal): Promise<void> {
    await this.tokens.revoke(who, id);
  }
}
