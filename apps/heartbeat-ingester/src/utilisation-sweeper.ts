import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { Counter } from 'prom-client';
import { ClusterUtilisationStore } from '@gantry/persistence';
import { CONFIG, PeriodicService, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import { IngesterEnv } from './config';

const swept = new Counter({ name: 'gantry_cluster_utilisation_swept_total', help: 'Silent nodes taken out of the cluster utilisation sums' });
/** Often enough that a dead node leaves the averages within a second of turning UNHEALTHY. */
const SWEEP_EVERY_MS = 1000;

/**
 * Takes nodes silent for GANTRY_NODE_DEAD_MS out of the cluster utilisation sums, so the averages
 * cover live nodes only. Every replica sweeps; the script makes concurrent sweeps harmless.
 */
@Injectable()
export class UtilisationSweeper extends PeriodicService {
  private readonly store: ClusterUtilisationStore;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: IngesterEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: { warn(obj: object, msg: string): void },
  ) {
    super();
    this.store = new ClusterUtilisationStore(redis);
  }

  protected periodMs(): number {
    return SWEEP_EVERY_MS;
  }

  // sweep() logs its own failures.
  protected tick(): Promise<number> {
    return this.sweep();
  }

  async sweep(nowMs = Date.now()): Promise<number> {
    try {
      const n = await this.store.sweepSilent(nowMs - this.config.GANTRY_NODE_DEAD_MS);
      swept.inc(n);
      return n;
    } catch (err) {
      this.logger.warn({ err }, 'utilisation sweep failed; next tick retries');
      return 0;
    }
  }
}
