import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CommandKeyView, NodeEnrollmentView, NodeEnrollmentsView, NodeIdsDto } from '@gantry/contracts';
import { BearerAuthGuard } from '../auth/bearer-auth.guard';
import { Roles } from '../auth/roles.decorator';
import { EnrollmentService } from './enrollment.service';

/** Node enrollment (operators) and the command-signing key (anyone): the trust an agent starts from. */
@ApiTags('nodes')
@ApiBearerAuth()
@UseGuards(BearerAuthGuard)
@Controller()
export class EnrollmentController {
  constructor(private readonly enrollment: EnrollmentService) {}

  @Post('v1/nodes/:id/enrollment')
  @HttpCode(201)
  @Roles('operator')
  @ApiOperation({ operationId: 'nodes.enroll', summary: 'Enroll a node, or enroll it again (the old credential stops working)' })
  @ApiCreatedResponse({ type: NodeEnrollmentView })
  async enroll(@Param('id') id: string): Promise<NodeEnrollmentView> {
    const [one] = await this.enrollment.enroll([id]);
    return { ...one, kafka: this.enrollment.agentKafka, commandPublicKey: this.enrollment.commandPublicKey };
  }

  @Delete('v1/nodes/:id/enrollment')
  @HttpCode(204)
  @Roles('operator')
  @ApiOperation({ operationId: 'nodes.revokeEnrollment', summary: 'Revoke a node: from then on nothing it sends changes anything' })
  @ApiNoContentResponse()
  async revoke(@Param('id') id: string): Promise<void> {
    await this.enrollment.revoke(id);
  }

  @Post('v1/node-enrollments')
  @HttpCode(201)
  @Roles('operator')
  @ApiOperation({ operationId: 'nodes.enrollMany', summary: 'Enroll up to 1,000 nodes at once (a simulated fleet enrolls itself this way)' })
  @ApiCreatedResponse({ type: NodeEnrollmentsView })
  async enrollMany(@Body() dto: NodeIdsDto): Promise<NodeEnrollmentsView> {
    return { items: await this.enrollment.enroll(dto.nodeIds), kafka: this.enrollment.agentKafka, commandPublicKey: this.enrollment.commandPublicKey };
  }

  @Get('v1/cluster/command-key')
  @ApiOperation({ operationId: 'cluster.commandKey', summary: "The control plane's command-signing public key" })
  @ApiOkResponse({ type: CommandKeyView })
  commandKey(): CommandKeyView {
    return { publicKey: this.enrollment.commandPublicKey };
  }
}
