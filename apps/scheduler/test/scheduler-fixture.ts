import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { NodeLiveStore } from '@gantry/persistence';
import { openDataSource, openRedis, silentLogger, uniqueTag } from '@gantry/testing';
import { SchedulerEnv } from '../src/config';
import { PlacementCommitter } from '../src/placement-committer';
import { PreemptionStep } from '../src/preemption-step';
import { SchedulingCycle } from '../src/scheduling-cycle';

/** What the scheduler's integration suites share: real Postgres and Redis, and the cycle built as the service builds it. */
export interface SchedulerFixture {
  ds: DataSource;
  redis: Redis;
  /** A scheduling cycle of its own instance id, with these settings over the defaults. */
  cycle(settings?: Partial<SchedulerEnv>): SchedulingCycle;
  /** Each node beat now (or at `at`), as the ingester records a beat: a node the cycle was never told of is not placed on. */
  heard(nodeIds: string[], at?: number): Promise<void>;
}

/** Opens the fixture before the suite's tests (and closes it after): call at the top of a spec. */
export function useSchedulerFixture(): SchedulerFixture {
  let live: NodeLiveStore;
  const f: SchedulerFixture = {
    ds: undefined as unknown as DataSource,
    redis: undefined as unknown as Redis,
    cycle(settings = {}) {
      const config = Object.assign(new SchedulerEnv(), { GANTRY_INSTANCE_ID: uniqueTag('sched') }, settings);
      return new SchedulingCycle(
        f.ds,
        f.redis,
        config,
        silentLogger() as never,
        new PlacementCommitter(f.ds),
        new PreemptionStep(f.ds, config, silentLogger() as never),
      );
    },
    async heard(nodeIds, at = Date.now()) {
      await live.recordBeats(nodeIds.map((nodeId) => ({ nodeId, bootId: 'b', seq: at, sentAt: at, receivedAt: at, running: '[]' })));
    },
  };
  beforeAll(async () => {
    f.ds = await openDataSource();
    f.redis = await openRedis();
    live = new NodeLiveStore(f.redis, 120_000);
    // Earlier tests leave queued jobs behind; they must not crowd this suite's batch.
    await f.ds.query(`UPDATE jobs SET state = 'CANCELLED' WHERE state = 'QUEUED'`);
  });
  afterAll(async () => {
    f.redis?.disconnect();
    await f.ds?.destroy();
  });
  return f;
}
