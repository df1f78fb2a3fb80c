import { Controller, Get, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { WhoamiView } from '@gantry/contracts';
import { BearerAuthGuard, CurrentPrincipal } from '../auth/bearer-auth.guard';
import { Principal } from '../auth/principal';

/** Who the token is: a console signs in with a pasted token and shows operators their controls. */
@ApiTags('whoami')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller('v1/whoami')
export class WhoamiController {
  @Get()
  @ApiOperation({ summary: 'The owner and role of the token presented' })
  @ApiOkResponse({ type: WhoamiView })
  get(@CurrentPrincipal() who: Principal): WhoamiView {
    return { owner: who.owner, role: who.role };
  }
}
