import type { JobSpec } from '@gantry/client';

/**
 * What the load submits: short sleeps, mostly single-node, some GPU jobs, some gangs (all fit the
 * fleet). The simulated fleet sleeps SIM_DURATION_MS; a real agent (the hostile tenant's node) runs
 * the command, a sleep of the same length.
 */
export function nextJob(i: number, opts: { minMs: number; maxMs: number; maxRetries: number }, random = Math.random): JobSpec {
  const durationMs = Math.round(opts.minMs + random() * (opts.maxMs - opts.minMs));
  const base = {
    image: 'none',
    command: ['sleep', (durationMs / 1000).toFixed(3)],
    env: { SIM_DURATION_MS: String(durationMs) },
    maxRetries: opts.maxRetries,
    labels: { chaos: 'load' },
  };
  const pick = random();
  if (pick < 0.1) {
    // A gang: all ranks placed together or not at all, on whole GPU nodes.
    const nodes = 2 + Math.floor(random() * 2);
    return { ...base, name: `chaos-gang-${i}`, nodes, resources: { gpus: 4, cpuCores: 8, memoryMiB: 65536 } };
  }
  if (pick < 0.4) {
    return { ...base, name: `chaos-gpu-${i}`, resources: { gpus: 1 + Math.floor(random() * 4), cpuCores: 4, memoryMiB: 32768 } };
  }
  return { ...base, name: `chaos-cpu-${i}`, resources: { gpus: 0, cpuCores: 1, memoryMiB: 1024 } };
}
