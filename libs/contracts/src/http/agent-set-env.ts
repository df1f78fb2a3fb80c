/**
 * Variables the agent sets for every rank (contract 5.1): a job may not name them in its `env`,
 * since the agent's values describe the placement and the sandbox, which the job does not choose.
 */
export const AGENT_SET_ENV_NAMES: ReadonlySet<string> = new Set([
  'CUDA_VISIBLE_DEVICES',
  'NVIDIA_VISIBLE_DEVICES',
  'RANK',
  'WORLD_SIZE',
  'LOCAL_RANK',
  'MASTER_ADDR',
  'MASTER_PORT',
]);
export const AGENT_SET_ENV_PREFIX = 'GANTRY_';

export function isAgentSetEnvName(name: string): boolean {
  return name.startsWith(AGENT_SET_ENV_PREFIX) || AGENT_SET_ENV_NAMES.has(name);
}

/** The names of `env` the agent sets, in the order given; empty when none. */
export function agentSetEnvNames(env: Record<string, string>): string[] {
  return Object.keys(env).filter(isAgentSetEnvName);
}

/**
 * Names of `env` whose values a container runtime cannot take: the runtime gets a job's env from a
 * file of `NAME=value` lines (never from its own environment, which the job must not reach), and
 * such a file cannot hold a line break.
 */
export function containerUnsafeEnvNames(env: Record<string, string>): string[] {
  return Object.entries(env)
    .filter(([, v]) => v.includes('\n') || v.includes('\r'))
    .map(([k]) => k);
}
