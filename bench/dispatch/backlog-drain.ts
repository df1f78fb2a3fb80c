/**
 * Placement rate while the scheduler drains a backlog, three ways that should agree:
 *   - the database: each job's first QUEUED -> SCHEDULED event time;
 *   - the scheduler's own counter, gantry_scheduler_placements_total{outcome="placed"}, scraped every second;
 *   - the RUN commands' Kafka timestamps (placement plus the outbox relay).
 * The per-second series run from the first placement's second to the last's; their first and last
 * seconds are partial and left out of the median, a quiet second in between is kept (a stall counts).
 */
import { Client } from 'pg';
import { buckets, parsePrometheus, sum } from '../heartbeats/prometheus-text';
import { median } from '../api/stats';
import { CommandWatch } from './command-watch';

export interface MetricSample {
  atMs: number;
  placed: number | null;
  lostRaces: number | null;
  cycles: number | null;
  cycleSecondsSum: number | null;
  queued: number;
}

export interface RateSeries {
  /** Placements in each whole second from the first placement's to the last's. */
  perSecond: number[];
  /** Median of perSecond without its first and last (partial) seconds. */
  medianPerS: number;
  /**
   * Median rate over consecutive 5-second windows: a scheduler that places in bursts (a cycle's worth,
   * then a pause) has per-second medians of 0 or a whole cycle; windows show its sustained pace.
   */
  median5sPerS: number;
  maxPerS: number;
  firstMs: number | null;
  lastMs: number | null;
  count: number;
}

/** Scrapes the scheduler's counters and counts the backlog still QUEUED, once a second. */
export class DrainSampler {
  readonly samples: MetricSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly db: Client,
    private readonly schedulerUrl: () => string,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sample(), 1000);
    void this.sample();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Jobs still QUEUED: the backlog plus any phase-1 job left ahead of it. */
  async queued(): Promise<number> {
    const { rows } = await this.db.query(`SELECT count(*) AS n FROM jobs WHERE state = 'QUEUED'`);
    return Number(rows[0].n);
  }

  private async sample(): Promise<void> {
    // A slow scrape (a busy machine) skips a tick rather than piling up requests.
    if (this.busy) return;
    this.busy = true;
    try {
      const atMs = Date.now();
      const [metrics, queued] = await Promise.all([scrapeScheduler(this.schedulerUrl()), this.queued()]);
      this.samples.push({ atMs, ...metrics, queued });
    } catch {
      /* the database is ours; a failed count is retried next tick */
    } finally {
      this.busy = false;
    }
  }
}

async function scrapeScheduler(url: string): Promise<Omit<MetricSample, 'atMs' | 'queued'>> {
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2000) });
    const m = parsePrometheus(await res.text());
    const outcome = (o: string) => m.filter((s) => s.name === 'gantry_scheduler_placements_total' && s.labels.outcome === o).reduce((a, s) => a + s.value, 0);
    const cycles = buckets(m, 'gantry_scheduler_cycle_seconds').get(Infinity) ?? null;
    return { placed: outcome('placed'), lostRaces: outcome('lost_race'), cycles, cycleSecondsSum: sum(m, 'gantry_scheduler_cycle_seconds_sum') };
  } catch {
    // Not up yet (restarting) or too busy to answer within 2 s.
    return { placed: null, lostRaces: null, cycles: null, cycleSecondsSum: null };
  }
}

/** Buckets event times (ms) into whole seconds. */
export function seriesOf(times: number[]): RateSeries {
  if (times.length === 0) return { perSecond: [], medianPerS: NaN, median5sPerS: NaN, maxPerS: NaN, firstMs: null, lastMs: null, count: 0 };
  const sorted = [...times].sort((a, b) => a - b);
  const first = Math.floor(sorted[0] / 1000);
  const perSecond = new Array<number>(Math.floor(sorted[sorted.length - 1] / 1000) - first + 1).fill(0);
  for (const t of sorted) perSecond[Math.floor(t / 1000) - first]++;
  const inner = perSecond.length > 2 ? perSecond.slice(1, -1) : perSecond;
  const windows: number[] = [];
  for (let i = 0; i + 5 <= inner.length; i += 5) windows.push(inner.slice(i, i + 5).reduce((a, b) => a + b, 0) / 5);
  return {
    perSecond,
    medianPerS: median(inner),
    median5sPerS: median(windows),
    maxPerS: Math.max(...perSecond),
    firstMs: sorted[0],
    lastMs: sorted[sorted.length - 1],
    count: sorted.length,
  };
}

/**
 * First placement time of every job placed since the scheduler restarted: the backlog and any
 * phase-1 job still queued ahead of it (FIFO) are one backlog to the scheduler.
 */
export async function placementTimes(db: Client, sinceMs: number): Promise<number[]> {
  const { rows } = await db.query<{ at: Date }>(`SELECT min(at) AS at FROM job_events WHERE to_state = 'SCHEDULED' GROUP BY job_id HAVING min(at) >= $1`, [
    new Date(sinceMs),
  ]);
  return rows.map((r) => r.at.getTime());
}

/** RUN publication time of every job first dispatched since the scheduler restarted, from the command watch. */
export function runTimes(watch: CommandWatch, sinceMs: number): number[] {
  const out: number[] = [];
  for (const id of watch.jobs.keys()) {
    const t = watch.dispatchedAt(id);
    if (t !== null && t >= sinceMs) out.push(t);
  }
  return out;
}
/** Per-second deltas of the scheduler's placed counter (samples about a second apart). */
export function metricSeries(samples: MetricSample[]): {
  perSecond: number[];
  medianPerS: number;
  cycles: number | null;
  meanCycleMs: number | null;
  lostRaces: number | null;
} {
  const ok = samples.filter((s) => s.placed !== null);
  const perSecond: number[] = [];
  for (let i = 1; i < ok.length; i++) {
    const dt = (ok[i].atMs - ok[i - 1].atMs) / 1000;
    perSecond.push(Math.round((ok[i].placed! - ok[i - 1].placed!) / Math.max(dt, 1e-3)));
  }
  // The busy stretch: from the first second with placements to the last.
  const firstBusy = perSecond.findIndex((x) => x > 0);
  let lastBusy = perSecond.length - 1;
  while (lastBusy >= 0 && perSecond[lastBusy] === 0) lastBusy--;
  const busy = firstBusy < 0 ? [] : perSecond.slice(firstBusy, lastBusy + 1);
  const last = ok[ok.length - 1];
  const first = ok[0];
  const cycles = last && first && last.cycles !== null && first.cycles !== null ? last.cycles - first.cycles : null;
  const cycleS = last && first && last.cycleSecondsSum !== null && first.cycleSecondsSum !== null ? last.cycleSecondsSum - first.cycleSecondsSum : null;
  return {
    perSecond: busy,
    medianPerS: median(busy.length > 2 ? busy.slice(1, -1) : busy),
    cycles,
    meanCycleMs: cycles && cycleS !== null ? (cycleS / cycles) * 1000 : null,
    lostRaces: last?.lostRaces ?? null,
  };
}
