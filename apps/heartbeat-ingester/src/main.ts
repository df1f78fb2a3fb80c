import './instrumentation';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { IngesterEnv } from './config';
import { IngesterModule } from './ingester.module';

async function bootstrap(): Promise<void> {
  const config = loadConfig(IngesterEnv);
  await bootstrapService(IngesterModule.forConfig(config), config);
}

bootstrap().catch(exitOnBootFailure);
