/**
 * A generated workload for the explain replay: jobs with a declared limit (maxRuntimeSeconds) and
 * an actual runtime, arriving as a Poisson stream sized to load a fleet to a target utilisation.
 * Seeded: the same options give the same workload on every machine.
 */
import { seededRandom } from '@gantry/testing';

export interface ReplayQueue {
  name: string;
  priority: number;
  quotaGpus: number | null;
  /** Share of submissions that go to this queue. */
  share: number;
}

export interface ReplayJob {
  id: string;
  queue: string;
  submitAtMs: number;
  /** Per node. */
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
  /** Gang size. */
  nodes: number;
  maxRuntimeSeconds: number;
  /** What it really runs: at most its limit (a job past its limit is ended at it). */
  actualRuntimeSeconds: number;
}

export interface WorkloadOptions {
  seed: number;
  jobs: number;
  fleetGpus: number;
  /** Offered GPU-seconds over fleet GPU-seconds (actual runtimes): above ~0.85 queues build up. */
  load: number;
  /** A job that does not run to its limit ends at limit × U(min, max). */
  earlyEnd: { min: number; max: number };
  /** Share of jobs that run to their limit (and are ended there). */
  atLimitShare: number;
  queues: readonly ReplayQueue[];
}

const pick = <T>(rnd: () => number, weighted: ReadonlyArray<readonly [T, number]>): T => {
  let r = rnd() * weighted.reduce((s, [, w]) => s + w, 0);
  for (const [v, w] of weighted) if ((r -= w) < 0) return v;
  return weighted[weighted.length - 1][0];
};

/** GPUs per node a job asks, and how often. */
const GPU_SHAPES = [
  [1, 30],
  [2, 20],
  [4, 25],
  [8, 25],
] as const;
/** Limits users set (seconds): 15 min .. 4 h. */
const LIMITS = [
  [900, 20],
  [1800, 25],
  [3600, 25],
  [7200, 20],
  [14400, 10],
] as const;

export function generateWorkload(o: WorkloadOptions): ReplayJob[] {
  const rnd = seededRandom(o.seed);
  const shapes = Array.from({ length: o.jobs }, (_, i) => {
    const gpus = pick(rnd, GPU_SHAPES);
    // One 8-GPU job in five is a gang of 2 or 4 nodes.
    const nodes = gpus === 8 && rnd() < 0.2 ? (rnd() < 0.5 ? 2 : 4) : 1;
    const maxRuntimeSeconds = pick(rnd, LIMITS);
    const atLimit = rnd() < o.atLimitShare;
    const fraction = atLimit ? 1 : o.earlyEnd.min + rnd() * (o.earlyEnd.max - o.earlyEnd.min);
    return {
      id: `job-${String(i).padStart(5, '0')}`,
      queue: pick(
        rnd,
        o.queues.map((q) => [q.name, q.share] as const),
      ),
      gpus,
      cpuCores: gpus * 8,
      memoryMiB: gpus * 65536,
      nodes,
      maxRuntimeSeconds,
      actualRuntimeSeconds: Math.max(1, Math.round(maxRuntimeSeconds * fraction)),
    };
  });
  const gpuSeconds = shapes.reduce((s, j) => s + j.gpus * j.nodes * j.actualRuntimeSeconds, 0);
  // Mean gap so that the stream offers `load` of the fleet over the submission window.
  const meanGapMs = (gpuSeconds / (o.load * o.fleetGpus) / o.jobs) * 1000;
  let at = 0;
  return shapes.map((s) => {
    at += Math.round(-Math.log(1 - rnd()) * meanGapMs);
    return { ...s, submitAtMs: at };
  });
}
