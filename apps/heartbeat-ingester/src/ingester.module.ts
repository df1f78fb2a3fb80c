import { DynamicModule, Module } from '@nestjs/common';
import { RuntimeModule } from '@gantry/runtime';
import { IngesterEnv } from './config';
import { HeartbeatBatchWriter } from './heartbeat-batch-writer';
import { HeartbeatConsumer } from './heartbeat-consumer';
import { UtilisationSweeper } from './utilisation-sweeper';

@Module({})
export class IngesterModule {
  static forConfig(config: IngesterEnv): DynamicModule {
    return {
      module: IngesterModule,
      imports: [RuntimeModule.forRoot({ service: 'heartbeat-ingester', config, needs: { postgres: true, redis: true }, verifiesNodes: true })],
      providers: [HeartbeatBatchWriter, HeartbeatConsumer, UtilisationSweeper],
    };
  }
}
