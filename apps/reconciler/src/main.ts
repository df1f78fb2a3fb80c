import './instrumentation';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { ReconcilerEnv } from './config';
import { ReconcilerModule } from './reconciler.module';

async function bootstrap(): Promise<void> {
  const config = loadConfig(ReconcilerEnv);
  await bootstrapService(ReconcilerModule.forConfig(config), config);
}

bootstrap().catch(exitOnBootFailure);
