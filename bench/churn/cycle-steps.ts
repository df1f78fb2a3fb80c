import { Sample, scrapeMetrics, sum, sumByLabel } from '../heartbeats/prometheus-text';

/**
 * The scheduler's cycles during a phase, from its own histograms (`gantry_scheduler_cycle_seconds`,
 * `gantry_scheduler_cycle_step_seconds` by step, apps/scheduler/src/cycle-clock.ts): how many
 * cycles ran and where each one's time went. Wall time in the scheduler, not CPU.
 */
export interface CycleSnapshot {
  cycles: number;
  seconds: number;
  steps: Map<string, number>;
  placed: number;
  /** Placements that lost their compare-and-set or a node lease (planned again). */
  lost: number;
}

export interface CycleUse {
  cycles: number;
  /** Mean wall time of one cycle, ms. */
  meanMs: number;
  /** Placements per cycle, on average. */
  placedPerCycle: number;
  /** Placements lost (a node or job changed since the cycle read it, or another replica's lease), in all. */
  lostRaces: number;
  /** Mean wall time per cycle of each step, ms, largest first. */
  stepMs: Record<string, number>;
}

export function cycleSnapshotOf(samples: Sample[]): CycleSnapshot {
  const outcomes = sumByLabel(samples, 'gantry_scheduler_placements_total', 'outcome');
  const placed = outcomes.get('placed') ?? 0;
  return {
    cycles: sum(samples, 'gantry_scheduler_cycle_seconds_count'),
    seconds: sum(samples, 'gantry_scheduler_cycle_seconds_sum'),
    steps: sumByLabel(samples, 'gantry_scheduler_cycle_step_seconds_sum', 'step'),
    placed,
    lost: outcomes.get('lost_race') ?? 0,
  };
}

export async function cycleSnapshot(schedulerUrl: string): Promise<CycleSnapshot> {
  return cycleSnapshotOf(await scrapeMetrics(schedulerUrl));
}

export function cyclesBetween(a: CycleSnapshot, b: CycleSnapshot): CycleUse {
  const cycles = b.cycles - a.cycles;
  const per = (x: number) => (cycles > 0 ? Math.round((x / cycles) * 100) / 100 : 0);
  const stepMs: Record<string, number> = {};
  const steps = [...b.steps].map(([k, v]) => [k, (v - (a.steps.get(k) ?? 0)) * 1000] as const).sort((x, y) => y[1] - x[1]);
  for (const [k, v] of steps) if (v > 0) stepMs[k] = per(v);
  return { cycles, meanMs: per((b.seconds - a.seconds) * 1000), placedPerCycle: per(b.placed - a.placed), lostRaces: b.lost - a.lost, stepMs };
}
