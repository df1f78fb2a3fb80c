import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { UsageFolded, foldUsage, holdsLeadership, inTransaction } from '@gantry/persistence';
import { type Logger } from '@gantry/platform';
import { CONFIG, PeriodicService, SERVICE_LOGGER } from '@gantry/runtime';
import { ReconcilerEnv } from './config';
import { LeaderElection } from './leader-election';

const folded = new Counter({ name: 'gantry_usage_records_folded_total', help: 'Usage records folded into the hourly rollup and fair share (ADR 0037)' });

/** Records per fold transaction: short transactions, whatever the backlog. */
const BATCH = 2000;
/** Most folds per round; the rest waits for the next round, so a round after an outage stays bounded. */
const MAX_BATCHES_PER_ROUND = 20;

/**
 * The one writer of the usage rollup and of fair share (ADR 0037): on the leader only, every
 * GANTRY_USAGE_FOLD_MS, records not folded yet are summed into usage_hourly and, decayed with
 * GANTRY_FAIRSHARE_HALF_LIFE_HOURS, into fair_share_usage, and marked folded, each batch in one
 * transaction fenced by the leadership. Report writers only insert records, so they never wait on
 * the hot rollup rows.
 */
@Injectable()
export class UsageFolder extends PeriodicService {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: ReconcilerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    private readonly election: LeaderElection,
  ) {
    super();
  }

  protected periodMs(): number {
    return this.config.GANTRY_USAGE_FOLD_MS;
  }

  protected tick(): Promise<number> {
    return this.round();
  }

  protected override roundFailed(err: unknown): void {
    this.logger.warn({ err }, 'usage fold failed; next round retries');
  }

  /** Folds what is there; returns how many records. */
  async round(now = new Date()): Promise<number> {
    const leadership = this.election.current();
    if (!leadership) return 0;
    const halfLifeSeconds = this.config.GANTRY_FAIRSHARE_HALF_LIFE_HOURS * 3600;
    let total = 0;
    for (let i = 0; i < MAX_BATCHES_PER_ROUND; i++) {
      const done = await inTransaction(this.ds, async (sql): Promise<UsageFolded | null> => {
        if (!(await holdsLeadership(sql, leadership))) return null;
        return foldUsage(sql, now, halfLifeSeconds, BATCH);
      });
      if (!done) break;
      total += done.records;
      if (done.records < BATCH) break;
    }
    folded.inc(total);
    return total;
  }
}
