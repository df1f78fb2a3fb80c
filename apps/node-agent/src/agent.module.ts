import { DynamicModule, Module } from '@nestjs/common';
import { KafkaSecurity } from '@gantry/messaging';
import { createLogger } from '@gantry/platform';
import { RuntimeModule } from '@gantry/runtime';
import { AgentEnv } from './config';
import { FleetService } from './fleet.service';
import { simulatedInventory, simulatedNode } from './fleet/fleet-layout';
import { NodesToEnroll } from './identity/enrollment-client';
import { KafkaTokenSource } from './identity/kafka-token-source';
import { NodeCredentials } from './identity/node-credentials';

@Module({})
export class AgentModule {
  static forConfig(config: AgentEnv): DynamicModule {
    const logger = createLogger('node-agent', config.LOG_LEVEL);
    // A simulated node is what its spec says: declared as such when the fleet enrolls it, so placement
    // believes it whole (ADR 0035); a real node's inventory is its operator's to declare.
    const nodes: NodesToEnroll =
      config.GANTRY_SIM_NODES > 0
        ? new Map(
            Array.from({ length: config.GANTRY_SIM_NODES }, (_, i) => {
              const spec = simulatedNode(config.GANTRY_SIM_PREFIX, i);
              return [spec.nodeId, simulatedInventory(spec, config.GANTRY_NODE_ADDRESS ?? null)];
            }),
          )
        : new Map([[config.realNodeId, null]]);
    const credentials = new NodeCredentials(config, nodes, logger);
    return {
      module: AgentModule,
      imports: [
        RuntimeModule.forRoot({
          service: 'node-agent',
          config,
          needs: { postgres: false, redis: false },
          kafkaSecurity: kafkaSecurityOf(config, credentials, logger),
        }),
      ],
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
