import { DynamicModule, Module } from '@nestjs/common';
import { RuntimeModule } from '@gantry/runtime';
import { AgentEnv } from './config';
import { FleetService } from './fleet.service';

@Module({})
export class AgentModule {
  static forConfig(config: AgentEnv): DynamicModule {
    return {
      module: AgentModule,
      imports: [RuntimeModule.forRoot({ service: 'node-agent', config, needs: { postgres: false, redis: false } })],
      providers: [FleetService],
    };
  }
}
