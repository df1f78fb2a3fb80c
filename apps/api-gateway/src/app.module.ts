import { DynamicModule, Module } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { CONFIG, RuntimeModule } from '@gantry/runtime';
import { AuditController } from './audit/audit.controller';
import { AuditLog } from './audit/audit-log';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { RequestGate } from './auth/request-gate';
import { TokenRegistry } from './auth/token-registry';
import { TokenService } from './auth/token.service';
import { GatewayEnv } from './config';
import { ClusterSummaryService } from './cluster/cluster-summary.service';
import { ClusterController } from './cluster/cluster.controller';
import { CursorCodec } from './http/cursor-codec';
import { IdempotencyKeySweeper } from './jobs/idempotency-key-sweeper';
import { JobRetentionSweeper } from './jobs/job-retention-sweeper';
import { JobsController } from './jobs/jobs.controller';
import { JobsService } from './jobs/jobs.service';
import { NodesController } from './nodes/nodes.controller';
import { NodesService } from './nodes/nodes.service';
import { QueuesController } from './queues/queues.controller';
import { TokensController } from './tokens/tokens.controller';

@Module({})
export class GatewayModule {
  static forConfig(config: GatewayEnv): DynamicModule {
    return {
      module: GatewayModule,
      imports: [RuntimeModule.forRoot({ service: 'api-gateway', config, needs: { postgres: true, redis: true }, outboxRelay: true })],
      controllers: [JobsController, QueuesController, TokensController, NodesController, ClusterController, AuditController],
      providers: [
        JobsService,
        NodesService,
        ClusterSummaryService,
        TokenRegistry,
        TokenService,
        RequestGate,
        BearerAuthGuard,
        AuditLog,
        IdempotencyKeySweeper,
        JobRetentionSweeper,
        {
          provide: CursorCodec,
          useFactory: (c: GatewayEnv) =>
            new CursorCodec(c.GANTRY_CURSOR_SECRET ?? createHash('sha256').update(`cursor:${c.GANTRY_ADMIN_TOKEN}`).digest('hex')),
          inject: [CONFIG],
        },
      ],
    };
  }
}
