import { join } from 'node:path';

/**
 * A service's environment for a bench run: NODE_OPTIONS preloading cpu-profiler.js (Node refuses
 * --cpu-prof there) so that the service writes <profileDir>/<service>/<pid>.cpuprofile when it
 * stops, when `profileDir` is set, plus any `extraNodeOptions`; nothing when neither is given.
 */
export function cpuProfilerEnv(profileDir: string, service: string, extraNodeOptions = ''): Record<string, string> {
  const profile = profileDir ? `--require ${join(__dirname, 'cpu-profiler.js')}` : '';
  const nodeOptions = [profile, extraNodeOptions].filter(Boolean).join(' ');
  return {
    ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
    ...(profileDir ? { GANTRY_CPU_PROF_DIR: join(profileDir, service) } : {}),
  };
}
