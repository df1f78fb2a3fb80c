import 'reflect-metadata';
import { IsIn, IsInt, IsNumber, IsOptional, IsPositive, IsString, Max, Min } from 'class-validator';
import { BACKFILL_MODES, BackfillMode } from '@gantry/domain';
import { StatefulServiceEnv } from '@gantry/platform';

export class SchedulerEnv extends StatefulServiceEnv {
  /** Longest wait between scheduling cycles when nothing wakes the scheduler, ms. */
  @IsInt() @Min(10) GANTRY_SCHEDULER_INTERVAL_MS: number = 1000;
  /**
   * Most queued jobs one cycle tries to place, across queues, in the policy's order; a cycle that
   * placed some with more waiting starts the next at once. A cycle's fixed cost (the fleet's health,
   * the fit index) is paid per cycle, so larger batches place faster, up to the commit's size.
   */
  @IsInt() @Min(1) @Max(100000) GANTRY_SCHEDULER_BATCH: number = 1000;
  /**
   * Pacing under load (loadGapMs): after a cycle that placed n jobs, the next starts no sooner than
   * min(n x GANTRY_SCHEDULER_GAP_PER_PLACEMENT_MS, GANTRY_SCHEDULER_MAX_GAP_MS) after it began. A
   * cycle costs about the same for 10 placements as for 40, so a steady stream is placed in fewer,
   * larger cycles; after a lone placement the next waits at most one placement's gap. A stream
   * batches only when it is faster than one job per gap: 20 ms puts that at 50 jobs/s (why not
   * less: ADR 0030's amendment). 0 max: off.
   */
  @IsInt() @Min(0) @Max(100) GANTRY_SCHEDULER_GAP_PER_PLACEMENT_MS: number = 20;
  /** The most a cycle's pacing gap may be, ms (see GANTRY_SCHEDULER_GAP_PER_PLACEMENT_MS); 0 turns pacing off. */
  @IsInt() @Min(0) @Max(1000) GANTRY_SCHEDULER_MAX_GAP_MS: number = 50;
  /** Jobs considered from the head of each queue per cycle (FIFO lookahead past a job that cannot go yet). */
  @IsInt() @Min(1) @Max(100000) GANTRY_SCHEDULER_LOOKAHEAD: number = 1000;
  /**
   * Backfill onto the reservation's nodes (ADR 0008): `strict`, the default, lets no later job onto
   * them, which keeps fair shares where limits overstate runtimes (bench:fairness); `runtime` lets a
   * later job on when its maxRuntimeSeconds ends before the reserved job's estimated start (contract 5.4).
   */
  @IsIn(BACKFILL_MODES as BackfillMode[]) GANTRY_SCHEDULER_BACKFILL: BackfillMode = 'strict';
  /**
   * How a priority band is ordered (ADR 0038): `decayed`, queues and owners by decayed usage over
   * share, weighted DRF breaking ties; `drf`, weighted DRF over what runs now alone (ADR 0008), the
   * policy before fair share, kept as the benchmark's same-run baseline.
   */
  @IsIn(['decayed', 'drf'], { message: 'GANTRY_SCHEDULER_FAIRNESS must be decayed or drf' }) GANTRY_SCHEDULER_FAIRNESS: 'decayed' | 'drf' = 'decayed';
  /** Half-life of past usage in fair share, hours (fractional: benchmarks compress time). */
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be a number of hours' })
  @IsPositive({ message: 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be more than 0' })
  @Max(87_600, { message: 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be at most 87600 (ten years)' })
  GANTRY_FAIRSHARE_HALF_LIFE_HOURS: number = 168;
  /** Lifetime of a node lease taken while committing a placement, ms. */
  @IsInt() @Min(100) GANTRY_NODE_LEASE_MS: number = 2000;
  /**
   * How long a preempted attempt has to stop (its KILL's SIGTERM-to-SIGKILL grace, ADR 0026), ms.
   * Its devices stay held until its agent reports it ended, so the preemptor starts about this much later.
   */
  @IsInt() @Min(0) @Max(3_600_000) GANTRY_PREEMPTION_GRACE_MS: number = 30_000;
  /** No job is preempted again within this long of its last preemption, ms. */
  @IsInt() @Min(0) GANTRY_PREEMPTION_COOLDOWN_MS: number = 300_000;
  /**
   * Most preemptors one cycle chooses victims for: the running attempts of lower bands are read once
   * a cycle, then each preemptor costs a search and one short transaction. Why 32: ADR 0026,
   * "Figures behind the code" (bench:dispatch).
   */
  @IsInt() @Min(0) @Max(1000) GANTRY_PREEMPTION_PER_CYCLE: number = 32;
  /** Identity of this replica in leases; defaults to hostname-pid. */
  @IsOptional() @IsString() GANTRY_INSTANCE_ID?: string;
}
