import { Body, Controller, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AgentKafkaTokenView, KafkaTokenRequestDto } from '@gantry/contracts';
import { SIGNATURE_HEADER } from '@gantry/messaging';
import { NodeKafkaTokens } from '../enrollment/node-kafka-tokens.service';

/**
 * Where a real agent gets its Kafka tokens (ADR 0034). The one route no bearer token opens: the
 * node proves its credential instead (header gantry-signature, as on its beats), so the agent
 * needs no API token at all.
 */
@ApiTags('nodes')
@ApiSecurity('nodeSignature')
@Controller('v1/nodes')
export class NodeKafkaTokenController {
  constructor(private readonly tokens: NodeKafkaTokens) {}

  @Post(':id/kafka-token')
  @HttpCode(200)
  @ApiOperation({
    summary: "A Kafka token for the node's agent: SASL/OAUTHBEARER as the node's own principal, which may use only the node's command group",
    description:
      'Authenticated by the node credential, not a bearer token: header `gantry-signature` = `v1=` + lowercase hex of HMAC-SHA256(key = the credential, data = "gantry-kafka-token/v1\\n<node id>\\n<at>"). ' +
      'Refused (401) for a node never enrolled, revoked, enrolled again since (a rotated credential), a bad signature, an `at` further than GANTRY_CLOCK_SKEW_MS from now, or a signature used before; 429 past a request a second (burst 10) per node; 404 where the gateway issues no tokens.',
  })
  @ApiOkResponse({ type: AgentKafkaTokenView })
  async issue(
    @Param('id') id: string,
    @Body() body: KafkaTokenRequestDto,
    @Headers(SIGNATURE_HEADER) signature: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AgentKafkaTokenView> {
    const { view, rate } = await this.tokens.issue(id, body.at, signature);
    void reply.header('ratelimit-limit', String(rate.limit)).header('ratelimit-remaining', String(rate.remaining));
    return view;
  }
}
