import { DynamicModule, Module } from '@nestjs/common';
import { CONFIG, RuntimeModule } from '@gantry/runtime';
import { AuditController } from './audit/audit.controller';
import { AuditLog } from './audit/audit-log';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { RequestGate } from './auth/request-gate';
import { TokenRegistry } from './auth/token-registry';
import { TokenService } from './auth/token.service';
import { GatewayEnv } from './config';
import { ClusterHeatmapService } from './cluster/cluster-heatmap.service';
import { ClusterSummaryService } from './cluster/cluster-summary.service';
import { ClusterController } from './cluster/cluster.controller';
import { EnrollmentService } from './enrollment/enrollment.service';
import { NodeKafkaTokens } from './enrollment/node-kafka-tokens.service';
import { CursorCodec } from './http/cursor-codec';
import { JobRetentionSweeper } from './jobs/job-retention-sweeper';
import { ArraySummariser } from './jobs/array-summariser';
import { JobsController } from './jobs/jobs.controller';
import { JobsService } from './jobs/jobs.service';
import { JobExplainService } from './jobs/job-explain.service';
import { NodeKafkaTokenController } from './nodes/node-kafka-token.controller';
import { NodesController } from './nodes/nodes.controller';
import { NodesService } from './nodes/nodes.service';
import { QueuesController } from './queues/queues.controller';
import { TokensController } from './tokens/tokens.controller';
import { EventStreamsService } from './events/event-streams.service';
import { EventsController } from './events/events.controller';
import { JobEventPublisher } from './events/job-event-publisher';
import { JobEventTail } from './events/job-event-tail';
import { OpenStreams } from './events/open-streams';
import { JobLogsService } from './logs/job-logs.service';
import { LogsController } from './logs/logs.controller';
import { OpenLogStreams } from './logs/open-log-streams';
import { TokenStreams } from './sessions/token-streams';
import { WhoamiController } from './whoami/whoami.controller';
import { UsageController } from './usage/usage.controller';

/** Every controller of the API, in the order the OpenAPI document lists them. */
export const GATEWAY_CONTROLLERS = [
  JobsController,
  LogsController,
  EventsController,
  QueuesController,
  TokensController,
  NodesController,
  NodeKafkaTokenController,
  ClusterController,
  AuditController,
  WhoamiController,
  UsageController,
];

@Module({})
export class GatewayModule {
  static forConfig(config: GatewayEnv): DynamicModule {
    return {
      module: GatewayModule,
      // verifiesNodes: who is enrolled, in memory, for the nodes' Kafka token requests (ADR 0034).
      imports: [
        RuntimeModule.forRoot({
          service: 'api-gateway',
          config,
          needs: { postgres: true, redis: true },
          outboxRelay: true,
          sendsCommands: true,
          verifiesNodes: true,
        }),
      ],
      controllers: GATEWAY_CONTROLLERS,
      providers: [
        JobsService,
        JobExplainService,
        EnrollmentService,
        NodeKafkaTokens,
        NodesService,
        ClusterSummaryService,
        TokenRegistry,
        ClusterHeatmapService,
        TokenService,
        RequestGate,
        BearerAuthGuard,
        AuditLog,
        OpenStreams,
        JobEventTail,
        EventStreamsService,
        JobEventPublisher,
        JobRetentionSweeper,
        ArraySummariser,
        OpenLogStreams,
        JobLogsService,
        TokenStreams,
        { provide: CursorCodec, useFactory: (c: GatewayEnv) => new CursorCodec(c.GANTRY_CURSOR_SECRET), inject: [CONFIG] },
      ],
    };
  }
}
