import { Module } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { RuntimeModule, CONFIG } from '@gantry/runtime';
import { GatewayEnv } from './config';
import { BearerAuthGuard } from './auth/bearer-auth.guard';
import { CursorCodec } from './http/cursor-codec';
import { JobsController } from './jobs/jobs.controller';
import { JobsService } from './jobs/jobs.service';

@Module({})
export class GatewayModule {
  static forConfig(config: GatewayEnv) {
    return {
      module: GatewayModule,
      imports: [RuntimeModule.forRoot({ service: 'api-gateway', config, needs: { postgres: true, redis: false }, outboxRelay: true })],
      controllers: [JobsController],
      providers: [
        JobsService,
        BearerAuthGuard,
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
