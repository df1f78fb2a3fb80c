/**
 * The jobs bench:dispatch submits. Every job's env carries SIM_DURATION_MS for the agent's `sleep`
 * executor, and its name says which phase made it, so the database can be read per phase.
 */

export const RATE_JOB_NAME = 'bench-dispatch-rate';
/** Phase 1's warm-up jobs: the same mix, not counted. */
export const RATE_WARMUP_JOB_NAME = 'bench-dispatch-rate-warmup';
export const BACKLOG_JOB_NAME = 'bench-dispatch-backlog';
export const PROBE_JOB_NAME = 'bench-dispatch-probe';
export const CURVE_JOB_NAME = 'bench-dispatch-curve';
export const CURVE_WARMUP_JOB_NAME = 'bench-dispatch-curve-warmup';
export const GANG_JOB_NAME = 'bench-dispatch-gang';

export interface RateMix {
  /** How long each job "runs" on its simulated node. */
  simDurationMs: number;
  /** Share of submissions that are gangs (0..1). */
  gangShare: number;
  /** Nodes per gang. */
  gangSize: number;
}

/** A single-node job asking for one GPU of any model: most of what a GPU cluster is asked for. */
export function singleGpuJob(name: string, simDurationMs: number): Record<string, unknown> {
  return {
    name,
    image: 'none',
    command: ['true'],
    env: { SIM_DURATION_MS: String(simDurationMs) },
    resources: { gpus: 1, cpuCores: 4, memoryMiB: 16384 },
  };
}

/** A gang of whole 8-GPU H100 nodes, which the scheduler prefers to place in one rack. */
export function gangJob(name: string, simDurationMs: number, size: number): Record<string, unknown> {
  return {
    name,
    image: 'none',
    command: ['true'],
    env: { SIM_DURATION_MS: String(simDurationMs) },
    resources: { gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 },
    nodes: size,
  };
}

/**
 * Bodies for the fixed-rate phase. Gangs come at an exact, evenly spread share (every
 * 1/gangShare-th request) rather than at random, so short runs get the share they asked for.
 */
export function rateBodies(mix: RateMix, name = RATE_JOB_NAME): () => string {
  const single = JSON.stringify(singleGpuJob(name, mix.simDurationMs));
  const gang = JSON.stringify(gangJob(name, mix.simDurationMs, mix.gangSize));
  let n = 0;
  let gangsSent = 0;
  return () => {
    n++;
    if (mix.gangShare > 0 && mix.gangSize > 1 && gangsSent < Math.floor(n * mix.gangShare)) {
      gangsSent++;
      return gang;
    }
    return single;
  };
}
