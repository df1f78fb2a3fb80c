import './instrumentation';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { SchedulerEnv } from './config';
import { SchedulerModule } from './scheduler.module';

async function bootstrap(): Promise<void> {
  const config = loadConfig(SchedulerEnv);
  await bootstrapService(SchedulerModule.forConfig(config), config);
}

bootstrap().catch(exitOnBootFailure);
