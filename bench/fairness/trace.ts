/**
 * The multi-team trace bench:fairness replays: each team (a queue) submits jobs at random times
 * (Poisson arrivals) offering a set share of the fleet's GPUs, with its own gang shapes and heavy-tailed
 * (log-normal) runtimes, each job declaring a `maxRuntimeSeconds` above what it really runs.
 * Seeded: the same teams, seed, duration and fleet size give the same trace on every machine.
 * Times are bench time (already compressed): seconds of wall clock. See bench/fairness/README.md.
 */
import { seededRandom } from '@gantry/testing';

/** Per node GPUs and the number of nodes: a gang when nodes > 1. */
export interface Shape {
  gpus: number;
  nodes: number;
}

export interface TeamSpec {
  /** The team's queue (all in one priority band). */
  name: string;
  /** Queue `weight`: its entitlement relative to the others. */
  weight: number;
  /** Owners submitting to the queue (`<name>-1` ..), jobs spread over them at random. */
  owners: number;
  /** Offered GPU-seconds per second as a share of the fleet's GPUs, while the team is active. */
  load: number;
  /** Shapes and their relative frequencies. */
  shapes: ReadonlyArray<readonly [Shape, number]>;
  /** Log-normal runtime: median and sigma of ln(runtime), truncated to [minS, maxS]. */
  runtime: { medianS: number; sigma: number; minS: number; maxS: number };
  /** maxRuntimeSeconds = ceil(runtime × U(min, max)): users overestimate. */
  overestimate: { min: number; max: number };
  /** When the team submits, seconds into the trace (default the whole trace). */
  startS?: number;
  endS?: number;
  /** Extra fields of the queue's POST /v1/queues in runs of the new policy only (e.g. parent, borrowingLimit). */
  newPolicyQueue?: Record<string, unknown>;
}

export interface TraceJob {
  /** `<team>-<n>`: stable across runs, used as the idempotency key and a label. */
  id: string;
  team: string;
  owner: string;
  submitAtMs: number;
  gpus: number;
  nodes: number;
  /** What the simulated job really runs (SIM_DURATION_MS). */
  runtimeMs: number;
  maxRuntimeSeconds: number;
}

export interface TraceOptions {
  seed: number;
  durationS: number;
  fleetGpus: number;
  teams: readonly TeamSpec[];
}

/** The default four teams: different weights, demand, shapes and runtimes (README, "The trace"). */
export const DEFAULT_TEAMS: readonly TeamSpec[] = [
  {
    name: 'vision',
    weight: 3,
    owners: 2,
    load: 0.55,
    shapes: [
      [{ gpus: 8, nodes: 1 }, 40],
      [{ gpus: 8, nodes: 2 }, 30],
      [{ gpus: 8, nodes: 4 }, 20],
      [{ gpus: 8, nodes: 8 }, 10],
    ],
    runtime: { medianS: 30, sigma: 0.9, minS: 5, maxS: 240 },
    overestimate: { min: 1.2, max: 3 },
  },
  {
    name: 'nlp',
    weight: 2,
    owners: 3,
    load: 0.4,
    shapes: [
      [{ gpus: 1, nodes: 1 }, 20],
      [{ gpus: 2, nodes: 1 }, 20],
      [{ gpus: 4, nodes: 1 }, 25],
      [{ gpus: 8, nodes: 1 }, 25],
      [{ gpus: 8, nodes: 2 }, 10],
    ],
    runtime: { medianS: 20, sigma: 1.0, minS: 3, maxS: 240 },
    overestimate: { min: 1.2, max: 3 },
  },
  {
    name: 'speech',
    weight: 1,
    owners: 2,
    load: 0.3,
    shapes: [
      [{ gpus: 1, nodes: 1 }, 40],
      [{ gpus: 2, nodes: 1 }, 30],
      [{ gpus: 4, nodes: 1 }, 30],
    ],
    runtime: { medianS: 15, sigma: 1.2, minS: 2, maxS: 240 },
    overestimate: { min: 1.5, max: 4 },
  },
  {
    name: 'infra',
    weight: 1,
    owners: 1,
    load: 0.08,
    shapes: [
      [{ gpus: 1, nodes: 1 }, 70],
      [{ gpus: 2, nodes: 1 }, 30],
    ],
    runtime: { medianS: 20, sigma: 0.7, minS: 2, maxS: 120 },
    overestimate: { min: 1.2, max: 2 },
  },
];

const pick = <T>(rnd: () => number, weighted: ReadonlyArray<readonly [T, number]>): T => {
  let r = rnd() * weighted.reduce((s, [, w]) => s + w, 0);
  for (const [v, w] of weighted) if ((r -= w) < 0) return v;
  return weighted[weighted.length - 1][0];
};

/** A standard normal draw (Box-Muller), from two uniforms. */
function normal(rnd: () => number): number {
  const u = 1 - rnd();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rnd());
}

/** A log-normal runtime in whole milliseconds, truncated to [minS, maxS] by clamping. */
export function drawRuntimeMs(rnd: () => number, r: TeamSpec['runtime']): number {
  const s = r.medianS * Math.exp(r.sigma * normal(rnd));
  return Math.round(Math.min(r.maxS, Math.max(r.minS, s)) * 1000);
}

interface Draw {
  gpus: number;
  nodes: number;
  runtimeMs: number;
  maxRuntimeSeconds: number;
  owner: string;
}

function drawJob(rnd: () => number, t: TeamSpec): Draw {
  const shape = pick(rnd, t.shapes);
  const runtimeMs = drawRuntimeMs(rnd, t.runtime);
  const over = t.overestimate.min + rnd() * (t.overestimate.max - t.overestimate.min);
  const owner = `${t.name}-${1 + Math.floor(rnd() * t.owners)}`;
  return { gpus: shape.gpus, nodes: shape.nodes, runtimeMs, maxRuntimeSeconds: Math.ceil((runtimeMs / 1000) * over), owner };
}

/**
 * Every team's jobs, merged in submission order (ties by id). A team's jobs are drawn until their
 * GPU-seconds reach its load × fleet GPUs × its active seconds, so each team offers what it was
 * given (to within one job) however heavy its tail; their submission times are as many uniform
 * draws over the active window, sorted: a Poisson process given its count.
 */
export function generateTrace(o: TraceOptions): TraceJob[] {
  const out: TraceJob[] = [];
  o.teams.forEach((t, teamIndex) => {
    // One stream per team, so adding a team leaves the others' jobs as they were.
    const rnd = seededRandom((o.seed * 1_000_003 + teamIndex * 7919) >>> 0);
    const startMs = (t.startS ?? 0) * 1000;
    const endMs = Math.min(o.durationS, t.endS ?? o.durationS) * 1000;
    if (endMs <= startMs) return;
    const target = t.load * o.fleetGpus * ((endMs - startMs) / 1000);
    const draws: Draw[] = [];
    for (let work = 0; work < target;) {
      const d = drawJob(rnd, t);
      // The last job counts if it brings the total nearer the target than leaving it out would.
      const w = d.gpus * d.nodes * (d.runtimeMs / 1000);
      if (work + w - target > target - work) break;
      draws.push(d);
      work += w;
    }
    const times = draws.map(() => startMs + Math.floor(rnd() * (endMs - startMs))).sort((a, b) => a - b);
    draws.forEach((d, n) => out.push({ id: `${t.name}-${String(n).padStart(5, '0')}`, team: t.name, submitAtMs: times[n], ...d }));
  });
  return out.sort((a, b) => a.submitAtMs - b.submitAtMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** What the trace offers, per team: jobs, GPU-seconds, offered load, runtime quantiles, largest gang. */
export function describeTrace(trace: readonly TraceJob[], o: Pick<TraceOptions, 'durationS' | 'fleetGpus'>) {
  const byTeam = new Map<string, TraceJob[]>();
  for (const j of trace) {
    const jobs = byTeam.get(j.team) ?? [];
    jobs.push(j);
    byTeam.set(j.team, jobs);
  }
  return [...byTeam].map(([team, jobs]) => {
    const runtimes = jobs.map((j) => j.runtimeMs / 1000).sort((a, b) => a - b);
    const q = (p: number) => runtimes[Math.min(runtimes.length - 1, Math.floor((p / 100) * runtimes.length))];
    const gpuSeconds = jobs.reduce((s, j) => s + j.gpus * j.nodes * (j.runtimeMs / 1000), 0);
    return {
      team,
      jobs: jobs.length,
      gpuSeconds: Math.round(gpuSeconds),
      offeredLoad: gpuSeconds / (o.durationS * o.fleetGpus),
      runtimeS: { p50: q(50), p90: q(90), p99: q(99), max: runtimes[runtimes.length - 1] },
      maxGangGpus: Math.max(...jobs.map((j) => j.gpus * j.nodes)),
      overestimate: jobs.reduce((s, j) => s + j.maxRuntimeSeconds / (j.runtimeMs / 1000), 0) / jobs.length,
    };
  });
}
