import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { SchedulerEnv } from './config';
import { SchedulingCycle } from './scheduling-cycle';

/**
 * Runs scheduling cycles: at once when woken (a job was created, capacity was freed), otherwise
 * every GANTRY_SCHEDULER_INTERVAL_MS. Wake-ups during a cycle coalesce into one more cycle.
 */
@Injectable()
export class SchedulingLoop implements OnApplicationBootstrap, OnModuleDestroy {
  private running = false;
  private woken = false;
  private wake: (() => void) | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly cycle: SchedulingCycle,
    @Inject(CONFIG) private readonly config: SchedulerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.running = true;
    this.loop = this.run();
  }

  poke(): void {
    this.woken = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      try {
        const r = await this.cycle.run();
        // Placements with more queued behind the lookahead, or a lost race: more may be placeable right now.
        if (r.moreQueued && r.placed > 0) this.woken = true;
        if (r.lostRaces > 0 && r.placed === 0) {
          // Another replica holds the leases: retry soon, but not in a tight loop.
          await new Promise((res) => setTimeout(res, 20 + Math.random() * 80));
          this.woken = true;
        } else if (r.lostRaces > 0) {
          this.woken = true;
        }
      } catch (e) {
        this.logger.warn({ err: e }, 'scheduling cycle failed; retrying');
      }
      if (this.woken || !this.running) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.config.GANTRY_SCHEDULER_INTERVAL_MS);
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
