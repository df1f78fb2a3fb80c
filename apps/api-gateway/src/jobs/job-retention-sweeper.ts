import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { DataSource } from 'typeorm';
import { autocommit, deleteJobsFinishedBefore, deleteUsageBefore, sweepIdempotencyKeys, sweepNodeTombstones } from '@gantry/persistence';
import { type Logger } from '@gantry/platform';
import { CONFIG, PeriodicService, SERVICE_LOGGER } from '@gantry/runtime';
import { GatewayEnv } from '../config';

const deleted = new Counter({ name: 'gantry_jobs_retention_deleted_total', help: 'Finished jobs deleted (with their events) past GANTRY_JOB_RETENTION_MS' });

/** Jobs per delete statement: each is one short transaction, whatever the backlog. */
const BATCH = 500;
/** Most statements per sweep; the rest waits for the next tick, so a first sweep of a large backlog stays bounded. */
const MAX_BATCHES_PER_SWEEP = 40;
/** Node tombstones are kept this long: every scheduler re-reads all nodes more often (FULL_NODE_READ_MS). */
const NODE_TOMBSTONE_MS = 60 * 60 * 1000;

/**
 * Deletes expired idempotency keys, then finished jobs older than GANTRY_JOB_RETENTION_MS with their
 * events, attempts and keys, then usage records and rollup hours older than
 * GANTRY_USAGE_RETENTION_DAYS, every GANTRY_RETENTION_SWEEP_MS, in bounded batches. (An expired key is
 * already treated as absent by the create path; sweeping it only keeps the table small.) Every
 * gateway replica runs it: each batch skips the jobs another replica's batch has locked, so replicas
 * share the work (ADR 0017).
 */
@Injectable()
export class JobRetentionSweeper extends PeriodicService {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  protected periodMs(): number {
    return this.config.GANTRY_RETENTION_SWEEP_MS;
  }

  // sweep() logs its own failures.
  protected tick(): Promise<number> {
    return this.sweep();
  }

  /** One sweep; returns how many jobs went. */
  async sweep(now = new Date()): Promise<number> {
    const sql = autocommit(this.ds);
    try {
      // Expired keys first: keeps small the range where a job that does not carry its key finds it.
      while ((await sweepIdempotencyKeys(sql, now)) > 0);
      const cutoff = new Date(now.getTime() - this.config.GANTRY_JOB_RETENTION_MS);
      let total = 0;
      for (let i = 0; i < MAX_BATCHES_PER_SWEEP; i++) {
        const n = await deleteJobsFinishedBefore(sql, cutoff, BATCH, now);
        total += n;
        if (n < BATCH) break;
      }
      deleted.inc(total);
      await sweepNodeTombstones(sql, new Date(now.getTime() - NODE_TOMBSTONE_MS));
      // Usage outlives jobs (ADR 0037): records and rollup hours go only past their own retention.
      const usageCutoff = new Date(now.getTime() - this.config.GANTRY_USAGE_RETENTION_DAYS * 24 * 3600 * 1000);
      for (let i = 0; i < MAX_BATCHES_PER_SWEEP && (await deleteUsageBefore(sql, usageCutoff, BATCH)) > 0; i++);
      return total;
    } catch (err) {
      this.logger.warn({ err }, 'job retention sweep failed; next tick retries');
      return 0;
    }
  }
}
