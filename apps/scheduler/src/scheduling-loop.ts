import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { LifecycleType } from '@gantry/contracts';
import { LoadGap, WakeKind, lostRaceBackoffMs, nextCycleDelayMs } from '@gantry/domain';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { SchedulerEnv } from './config';
import { SchedulingCycle } from './scheduling-cycle';

/**
 * While the queues are blocked on capacity, new work waits this long after the last cycle began,
 * doubling with each blocked cycle in a row up to the tick (see nextCycleDelayMs): a blocked queue
 * is re-read at most ~10 times a second at first and about once a second while it stays blocked,
 * however fast jobs are created; freed capacity still cycles at once.
 */
const BLOCKED_GAP_MS = 100;

const NOTHING_PLACED: Readonly<{ placed: number; leftWaiting: boolean }> = { placed: 0, leftWaiting: false };

/**
 * Runs scheduling cycles when woken (a job was created, capacity was freed) or every
 * GANTRY_SCHEDULER_INTERVAL_MS; when exactly is nextCycleDelayMs's decision (under a steady
 * stream, no sooner than a gap that grows with what the last cycle placed). Wake-ups during a
 * cycle coalesce into one more cycle.
 */
@Injectable()
export class SchedulingLoop implements OnApplicationBootstrap, OnModuleDestroy {
  private running = false;
  private pending: WakeKind | null = null;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;
  /** Blocked cycles in a row (0: the last one placed, or looked at nothing). */
  private blockedCycles = 0;
  /** Cycles in a row that placed nothing and lost only compare-and-sets (see lostRaceBackoffMs). */
  private changeStreak = 0;
  /** What the last cycle placed (the longer the next waits, loadGapMs) and whether it left jobs waiting. */
  private last = NOTHING_PLACED;

  private readonly loadGap: LoadGap;

  constructor(
    private readonly cycle: SchedulingCycle,
    @Inject(CONFIG) private readonly config: SchedulerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    this.loadGap = { perItemMs: config.GANTRY_SCHEDULER_GAP_PER_PLACEMENT_MS, maxMs: config.GANTRY_SCHEDULER_MAX_GAP_MS };
  }

  onApplicationBootstrap(): void {
    this.running = true;
    this.loop = this.run();
  }

  /** Something may be placeable: a lifecycle message of this kind arrived. */
  poke(type: LifecycleType = 'CAPACITY_RELEASED'): void {
    const kind: WakeKind = type === 'JOB_CREATED' ? 'new-work' : 'capacity';
    if (this.pending !== 'capacity') this.pending = kind;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.pending = null;
      const startedMs = Date.now();
      let blocked = false;
      try {
        const r = await this.cycle.run();
        this.last = { placed: r.placed, leftWaiting: r.considered > r.placed || r.moreQueued || r.lostRaces > 0 };
        blocked = r.considered > 0 && r.placed === 0 && r.lostRaces === 0;
        this.blockedCycles = blocked ? this.blockedCycles + 1 : 0;
        // Placements with more queued behind the lookahead, or a lost race: more may be placeable right now.
        if ((r.moreQueued && r.placed > 0) || r.lostRaces > 0) this.pending = 'capacity';
        const lostChanges = r.lostRaces - r.lostLeases;
        this.changeStreak = r.placed === 0 && lostChanges > 0 && r.lostLeases === 0 ? this.changeStreak + 1 : 0;
        const backoffMs = lostRaceBackoffMs({
          placed: r.placed,
          lostLeases: r.lostLeases,
          lostChanges,
          changeStreak: this.changeStreak,
          random: Math.random(),
        });
        if (backoffMs > 0) await new Promise((res) => setTimeout(res, backoffMs));
      } catch (e) {
        this.last = NOTHING_PLACED;
        this.logger.warn({ err: e }, 'scheduling cycle failed; retrying');
      }
      await this.pause(blocked, startedMs, Date.now());
    }
  }

  /** Waits until nextCycleDelayMs says go; a wake-up meanwhile is decided again. */
  private async pause(blocked: boolean, lastCycleStartedMs: number, lastCycleEndedMs: number): Promise<void> {
    for (;;) {
      if (!this.running) return;
      const ms = nextCycleDelayMs({
        pending: this.pending,
        blocked,
        blockedCycles: this.blockedCycles,
        lastCycleStartedMs,
        lastCycleEndedMs,
        nowMs: Date.now(),
        intervalMs: this.config.GANTRY_SCHEDULER_INTERVAL_MS,
        blockedGapMs: BLOCKED_GAP_MS,
        lastPlaced: this.last.placed,
        leftWaiting: this.last.leftWaiting,
        loadGap: this.loadGap,
      });
      if (ms <= 0) return;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = null;
    }
  }

  /** Finishes the cycle in flight (its commit included), then stops. */
  async onModuleDestroy(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }
}
