import './instrumentation';
import { bootstrapService, exitOnBootFailure, loadConfig } from '@gantry/platform';
import { AgentModule } from './agent.module';
import { AgentEnv } from './config';

async function bootstrap(): Promise<void> {
  const config = loadConfig(AgentEnv);
  if (config.GANTRY_AGENT_FENCE_MS >= config.GANTRY_NODE_DEAD_MS) {
    throw new Error('GANTRY_AGENT_FENCE_MS must be shorter than GANTRY_NODE_DEAD_MS: the agent must stop its work before the control plane places it elsewhere');
  }
  await bootstrapService(AgentModule.forConfig(config), config);
}

bootstrap().catch(exitOnBootFailure);
