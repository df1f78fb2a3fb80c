import './instrumentation';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { AgentModule } from './agent.module';
import { AgentEnv } from './config';

async function bootstrap(): Promise<void> {
  const config = loadConfig(AgentEnv);
  await bootstrapService(AgentModule.forConfig(config), config);
}

bootstrap().catch(exitOnBootFailure);
