import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { autocommit, sweepIdempotencyKeys } from '@gantry/persistence';
import { type Logger } from '@gantry/platform';
import { CONFIG, PeriodicService, SERVICE_LOGGER } from '@gantry/runtime';
import { GatewayEnv } from '../config';

/**
 * Deletes expired idempotency keys. Every gateway replica runs it: a DELETE of expired rows is
 * idempotent, so replicas sweeping at once cost a little work, never a wrong result. (An expired key
 * is already treated as absent by the create path; the sweep only keeps the table small.)
 */
@Injectable()
export class IdempotencyKeySweeper extends PeriodicService {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  protected periodMs(): number {
    return this.config.GANTRY_IDEMPOTENCY_SWEEP_MS;
  }

  // sweep() logs its own failures.
  protected tick(): Promise<number> {
    return this.sweep();
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

}
