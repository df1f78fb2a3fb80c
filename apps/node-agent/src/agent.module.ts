import { DynamicModule, Module } from '@nestjs/common';
import { KafkaSecurity } from '@gantry/messaging';
import { createLogger } from '@gantry/platform';
import { RuntimeModule } from '@gantry/runtime';
import { AgentEnv } from './config';
import { FleetService } from './fleet.service';
import { simulatedNode } from './fleet/fleet-layout';
import { KafkaTokenSource } from './identity/kafka-token-source';
import { NodeCredentials } from './identity/node-credentials';

@Module({})
export class AgentModule {
  static forConfig(config: AgentEnv): DynamicModule {
    const logger = createLogger('node-agent', config.LOG_LEVEL);
    const nodeIds = config.GANTRY_SIM_NODES > 0
      ? Array.from({ length: config.GANTRY_SIM_NODES }, (_, i) => simulatedNode(config.GANTRY_SIM_PREFIX, i).nodeId)
      : [config.realNodeId];
    const credentials = new NodeCredentials(config, nodeIds, logger);
    return {
      module: AgentModule,
      imports: [RuntimeModule.forRoot({ service: 'node-agent', config, needs: { postgres: false, redis: false }, kafkaSecurity: kafkaSecurityOf(config, credentials, logger) })],
      providers: [FleetService, { provide: NodeCredentials, useValue: credentials }],
    };
  }
}

/**
 * A real agent with KAFKA_SASL_MECHANISM=oauthbearer connects as its node's principal, with tokens
 * the gateway gives for its credential (ADR 0034); anything else connects as the config says.
 */
function kafkaSecurityOf(config: AgentEnv, credentials: NodeCredentials, logger: ReturnType<typeof createLogger>): KafkaSecurity | undefined {
  if (config.KAFKA_SASL_MECHANISM !== 'oauthbearer') return undefined;
  const nodeId = config.realNodeId;
  const tokens = new KafkaTokenSource({ gatewayUrl: config.tokenGatewayUrl!, nodeId, credential: () => credentials.of(nodeId), logger });
  return { ...config.kafkaSecurity, sasl: { mechanism: 'oauthbearer', token: () => tokens.token() } };
}
