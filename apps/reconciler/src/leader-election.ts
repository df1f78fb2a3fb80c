import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { hostname } from 'node:os';
import { DataSource } from 'typeorm';
import { Gauge } from 'prom-client';
import { Leadership, acquireLeadership, autocommit, releaseLeadership } from '@gantry/persistence';
import type { Logger } from '@gantry/platform';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import { ReconcilerEnv } from './config';

export const DETECTOR_LEASE = 'failure-detector';
const isLeader = new Gauge({ name: 'gantry_reconciler_is_leader', help: '1 while this replica leads the failure detector' });

/**
 * Keeps (or tries to take) the failure detector's lease in Postgres, renewing every third of its
 * lifetime. Any number of reconciler replicas may run; one leads. Its writes carry the epoch and are
 * fenced in the database (holdsLeadership), so a paused leader that wakes after losing the lease
 * cannot act.
 */
@Injectable()
export class LeaderElection implements OnApplicationBootstrap, OnModuleDestroy {
  private leadership: Leadership | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly holder: string;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: ReconcilerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    this.holder = config.GANTRY_INSTANCE_ID ?? `${hostname()}-${process.pid}`;
  }

  /** The leadership as last confirmed, or null. Writes must still be fenced with holdsLeadership. */
  current(): Leadership | null {
    return this.leadership;
  }

  onApplicationBootstrap(): void {
    void this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(100, Math.floor(this.config.GANTRY_LEADER_LEASE_MS / 3)));
  }

  async tick(): Promise<void> {
    try {
      const got = await acquireLeadership(autocommit(this.ds), DETECTOR_LEASE, this.holder, this.config.GANTRY_LEADER_LEASE_MS);
      if (got && (!this.leadership || got.epoch !== this.leadership.epoch)) this.logger.info({ epoch: got.epoch }, 'leading the failure detector');
      if (!got && this.leadership) this.logger.warn({ epoch: this.leadership.epoch }, 'lost the failure detector lease');
      this.leadership = got;
    } catch (err) {
      // Unable to renew: stop acting at once rather than risk acting on an expired lease.
      this.leadership = null;
      this.logger.warn({ err }, 'leader lease renewal failed');
    }
    isLeader.set(this.leadership ? 1 : 0);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    const held = this.leadership;
    this.leadership = null;
    // Hand over at once instead of making the next leader wait out the lease.
    if (held) await releaseLeadership(autocommit(this.ds), held).catch(() => undefined);
  }
}
