import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { autocommit, sweepIdempotencyKeys } from '@gantry/persistence';
import { PeriodicTask, type Logger } from '@gantry/platform';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import { GatewayEnv } from '../config';

/**
 * Deletes expired idempotency keys. Every gateway replica runs it: a DELETE of expired rows is
 * idempotent, so replicas sweeping at once cost a little work, never a wrong result. (An expired key
 * is already treated as absent by the create path; the sweep only keeps the table small.)
 */
@Injectable()
export class IdempotencyKeySweeper implements OnApplicationBootstrap, OnModuleDestroy {
  private task: PeriodicTask | null = null;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    // sweep() logs its own failures.
    this.task = new PeriodicTask(this.config.GANTRY_IDEMPOTENCY_SWEEP_MS, () => this.sweep(), () => undefined);
    this.task.start();
  }

  async sweep(now = new Date()): Promise<number> {
    try {
      let total = 0;
      let swept: number;
      do {
        swept = await sweepIdempotencyKeys(autocommit(this.ds), now);
        total += swept;
      } while (swept > 0);
      return total;
    } catch (err) {
      this.logger.warn({ err }, 'idempotency key sweep failed; next tick retries');
      return 0;
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.task?.stop();
  }
}
