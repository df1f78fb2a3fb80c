import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiTags } from '@nestjs/swagger';
import { BearerAuthGuard } from '../auth/bearer-auth.guard';
import { Roles } from '../auth/roles.decorator';
import { TokenService } from '../auth/token.service';
import { CreateTokenDto, TokenView } from './create-token.dto';

@ApiTags('tokens')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Roles('operator')
@Controller('v1/tokens')
export class TokensController {
  constructor(private readonly tokens: TokenService) {}

  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({ type: TokenView })
  create(@Body() dto: CreateTokenDto): Promise<TokenView> {
    return this.tokens.mint(dto.owner, dto.role);
  }
}
