import { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { PeriodicTask } from '@gantry/platform';

/**
 * A service's background round (a sweep, an enforcer) as a Nest provider: its PeriodicTask starts
 * once the application has booted and stops, after the round in flight, when the module is
 * destroyed. A subclass says how often (read at boot: its config is injected by then) and what one
 * round does; a round that throws goes to `roundFailed` and the next tick tries again.
 */
export abstract class PeriodicService implements OnApplicationBootstrap, OnModuleDestroy {
  private task: PeriodicTask | null = null;

  protected abstract periodMs(): number;
  protected abstract tick(): Promise<unknown>;
  /** A round that threw; by default nothing, for rounds that log their own failures. */
  protected roundFailed(_err: unknown): void {}

  onApplicationBootstrap(): void {
    this.task = new PeriodicTask(
      this.periodMs(),
      () => this.tick(),
      (err) => this.roundFailed(err),
    );
    this.task.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.task?.stop();
  }
}
