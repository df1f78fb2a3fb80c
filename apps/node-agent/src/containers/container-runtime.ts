import { execFileSync } from 'node:child_process';
import { ContainerRuntimeName } from './container-argv';

/**
 * The container runtime this node can run images with, checked once at start: `podman info` or
 * `docker info` must succeed (a docker client without a reachable daemon does not count). `auto`
 * tries podman first (daemonless: a container started by it is a child of the shim, so it outlives
 * the agent like any attempt). Returns the runtime, or null with why not.
 */
export function findContainerRuntime(choice: 'auto' | 'podman' | 'docker' | 'none'): { runtime: ContainerRuntimeName | null; why: string } {
  if (choice === 'none') return { runtime: null, why: 'GANTRY_AGENT_CONTAINER_RUNTIME=none' };
  const candidates: ContainerRuntimeName[] = choice === 'auto' ? ['podman', 'docker'] : [choice];
  const failures: string[] = [];
  for (const name of candidates) {
    try {
      execFileSync(name, ['info'], { stdio: 'ignore', timeout: 15_000 });
      return { runtime: name, why: `${name} info succeeded` };
    } catch (err) {
      failures.push(`${name}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return { runtime: null, why: failures.join('; ') };
}
