import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { autocommit, liveRanksOnNode, nodesDueForDrain } from '@gantry/persistence';
import { type Logger } from '@gantry/platform';
import { CONFIG, PeriodicService, SERVICE_LOGGER } from '@gantry/runtime';
import { AttemptLossApplier } from './attempt-loss-applier';
import { ReconcilerEnv } from './config';
import { LeaderElection } from './leader-election';

/**
 * Ends drains whose grace is over (POST /v1/nodes/{id}/drain): on the leader only, every
 * GANTRY_DETECTOR_INTERVAL_MS, each due node's remaining attempts are ended and requeued
 * (AttemptLossApplier.drain). A drain is thus done at most one interval after its deadline.
 */
@Injectable()
export class DrainEnforcer extends PeriodicService {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: ReconcilerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    private readonly election: LeaderElection,
    private readonly losses: AttemptLossApplier,
  ) {
    super();
  }

  // One round at a time (PeriodicService): two would end the same node's attempts twice (harmless, but wasted).
  protected periodMs(): number {
    return this.config.GANTRY_DETECTOR_INTERVAL_MS;
  }

  protected tick(): Promise<string[]> {
    return this.round();
  }

  protected override roundFailed(err: unknown): void {
    this.logger.warn({ err }, 'drain round failed');
  }

  /** The nodes whose drain this round finished. */
  async round(now = new Date()): Promise<string[]> {
    const leadership = this.election.current();
    if (!leadership) return [];
    const done: string[] = [];
    for (const nodeId of await nodesDueForDrain(autocommit(this.ds), now)) {
      const ranks = await liveRanksOnNode(autocommit(this.ds), nodeId);
      const result = await this.losses.drain(nodeId, ranks, leadership, now);
      if (result.deposed) break;
      this.logger.info({ nodeId, jobIds: result.jobIds }, 'node drained');
      done.push(nodeId);
    }
    return done;
  }
}
