/**
 * Dispatch latency per job: when its RUN command was published (Kafka timestamp, every gang rank)
 * minus when its create was due (open-loop: the scheduled send), or else when the gateway created it
 * (jobs.created_at). Single-node jobs and gangs are reported apart:
 * a gang waits for a whole set of free nodes, a single job for one GPU.
 */
import { Client } from 'pg';
import { LatencySummary, percentile } from '../api/stats';
import { CommandWatch } from './command-watch';

export interface DispatchLatency {
  jobs: number;
  /** Dispatched by the end of the submission phase. */
  dispatchedInPhase: number;
  notDispatchedInPhase: number;
  /** Dispatched by the end of the drain that follows the phase. */
  dispatchedByDrainEnd: number;
  neverDispatched: number;
  /** Over every job dispatched by the end of the drain, late ones included. */
  latencyMs: LatencySummary | null;
  /** Over the jobs dispatched within the phase only. */
  latencyInPhaseMs: LatencySummary | null;
}

export interface DispatchReport {
  all: DispatchLatency;
  single: DispatchLatency;
  gangs: DispatchLatency;
  /** Jobs created per second of the phase, as the database saw them. */
  createdPerSecond: number[];
  /** Every job's latency by when it was due, in 5 s windows from the first: whether the tail is steady or comes in bursts. */
  windows: Array<{ fromS: number; jobs: number; p50: number; p99: number; max: number }>;
}

const WINDOW_MS = 5_000;

export function summarise(values: number[]): LatencySummary | null {
  if (values.length === 0) return null;
  const v = [...values].sort((a, b) => a - b);
  return {
    count: v.length,
    mean: v.reduce((a, b) => a + b, 0) / v.length,
    p50: percentile(v, 50),
    p90: percentile(v, 90),
    p95: percentile(v, 95),
    p99: percentile(v, 99),
    p999: percentile(v, 99.9),
    max: v[v.length - 1],
  };
}

export interface LatencyWindow {
  /** Seconds from the first due time to the window's start. */
  fromS: number;
  /** The window's start, wall clock (ISO): to line it up with the services' logs. */
  at: string;
  jobs: number;
  p50: number;
  p99: number;
  max: number;
}

/** Latencies grouped by when their request was due, in windows of `windowMs` from `firstDueMs`. */
export function latencyWindows(samples: Array<{ dueMs: number; ms: number }>, firstDueMs: number, windowMs: number): LatencyWindow[] {
  const byWindow = new Map<number, number[]>();
  for (const { dueMs, ms } of samples) {
    const w = Math.floor((dueMs - firstDueMs) / windowMs);
    const list = byWindow.get(w);
    if (list) list.push(ms);
    else byWindow.set(w, [ms]);
  }
  return [...byWindow.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([w, v]) => {
      const sum = summarise(v)!;
      return {
        fromS: (w * windowMs) / 1000,
        at: new Date(firstDueMs + w * windowMs).toISOString(),
        jobs: sum.count,
        p50: Math.round(sum.p50),
        p99: Math.round(sum.p99),
        max: Math.round(sum.max),
      };
    });
}

interface JobRow {
  id: string;
  created_at: Date;
  nodes: number;
}

/** Reads every job the phase created (by name) and pairs it with its RUN commands. */
export async function dispatchLatency(
  db: Client,
  watch: CommandWatch,
  jobName: string,
  phaseEndMs: number,
  dueAt?: Map<string, number>,
): Promise<DispatchReport> {
  const { rows } = await db.query<JobRow>(`SELECT id, created_at, nodes FROM jobs WHERE name = $1 ORDER BY created_at`, [jobName]);
  const dueOf = (j: JobRow) => dueAt?.get(j.id) ?? j.created_at.getTime();
  const measure = (subset: JobRow[]): DispatchLatency => {
    const all: number[] = [];
    const inPhase: number[] = [];
    for (const j of subset) {
      const at = watch.dispatchedAt(j.id);
      if (at === null) continue;
      const ms = at - dueOf(j);
      all.push(ms);
      if (at <= phaseEndMs) inPhase.push(ms);
    }
    return {
      jobs: subset.length,
      dispatchedInPhase: inPhase.length,
      notDispatchedInPhase: subset.length - inPhase.length,
      dispatchedByDrainEnd: all.length,
      neverDispatched: subset.length - all.length,
      latencyMs: summarise(all),
      latencyInPhaseMs: summarise(inPhase),
    };
  };
  const perSecond = new Map<number, number>();
  for (const j of rows) {
    const s = Math.floor(j.created_at.getTime() / 1000);
    perSecond.set(s, (perSecond.get(s) ?? 0) + 1);
  }
  const seconds = [...perSecond.keys()].sort((a, b) => a - b);
  const createdPerSecond = seconds.length
    ? Array.from({ length: seconds[seconds.length - 1] - seconds[0] + 1 }, (_, i) => perSecond.get(seconds[0] + i) ?? 0)
    : [];
  const firstDue = rows.reduce((min, j) => Math.min(min, dueOf(j)), Infinity);
  const dispatched = rows.flatMap((j) => {
    const at = watch.dispatchedAt(j.id);
    return at === null ? [] : [{ dueMs: dueOf(j), ms: at - dueOf(j) }];
  });
  const windows = latencyWindows(dispatched, firstDue, WINDOW_MS).map(({ fromS, jobs, p50, p99, max }) => ({ fromS, jobs, p50, p99, max }));
  return {
    all: measure(rows),
    single: measure(rows.filter((j) => j.nodes === 1)),
    gangs: measure(rows.filter((j) => j.nodes > 1)),
    createdPerSecond,
    windows,
  };
}
