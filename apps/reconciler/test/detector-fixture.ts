import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { NodeLiveStore } from '@gantry/persistence';
import { TestSuiteName, openDataSource, silentLogger, testSuite, testWakeUpSender, uniqueTag } from '@gantry/testing';
import { AttemptLossApplier } from '../src/attempt-loss-applier';
import { ReconcilerEnv } from '../src/config';
import { FailureDetector } from '../src/failure-detector';
import { LeaderElection } from '../src/leader-election';

/**
 * What the failure-detector suites share, set up in beforeAll and torn down in afterAll: the test
 * database, a Redis db of the suite's own (the detector reads the whole last-seen set), an
 * attempt-loss applier, and detectors that lead at once with short test timeouts.
 */
export function detectorFixture(suite: TestSuiteName) {
  let wake: Awaited<ReturnType<typeof testWakeUpSender>>;
  const f = {
    ds: undefined as unknown as DataSource,
    redis: undefined as unknown as Redis,
    losses: undefined as unknown as AttemptLossApplier,

    config: (over: Partial<ReconcilerEnv> = {}) =>
      Object.assign(new ReconcilerEnv(), {
        GANTRY_NODE_SUSPECT_MS: 1000,
        GANTRY_NODE_DEAD_MS: 4000,
        GANTRY_INGEST_STALL_MS: 2000,
        GANTRY_INSTANCE_ID: uniqueTag('r'),
        GANTRY_LEADER_LEASE_MS: 60_000,
        GANTRY_EVICTIONS_PER_SECOND: 100,
        GANTRY_EVICTION_BURST: 100,
        GANTRY_PARTITION_MIN_RACK: 4,
        GANTRY_PARTITION_SHARE: 0.5,
        ...over,
      }),

    /** A beat from `nodeId` sent and received at `at`. */
    beat: (nodeId: string, at: number) =>
      new NodeLiveStore(f.redis, 600_000).recordBeats([{ nodeId, bootId: 'b', seq: at, sentAt: at, receivedAt: at, running: '[]' }]),

    /** A detector that leads and is past its grace at `now`. */
    async leadingDetector(now: number, over: Partial<ReconcilerEnv> = {}): Promise<FailureDetector> {
      const c = f.config(over);
      await f.ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector'`);
      const election = new LeaderElection(f.ds, c, silentLogger() as never);
      await election.tick();
      const detector = new FailureDetector(f.ds, f.redis, c, silentLogger() as never, election, f.losses);
      await f.redis.set('gantry:detector:info-since', String(now - 60_000));
      // The first round only starts the new leader's grace period.
      expect((await detector.round(now - 1_500)).judged).toBe(false);
      return detector;
    },
  };
  beforeAll(async () => {
    f.ds = await openDataSource();
    f.redis = new Redis(testSuite(suite).redisUrl);
    await f.redis.flushdb();
    wake = await testWakeUpSender('attempt-loss-test');
    f.losses = new AttemptLossApplier(f.ds, wake.sender, { GANTRY_NODE_START_FAILURES: 3 });
  });
  afterAll(async () => {
    // The detectors took the real lease name with long leases: hand it back, or the next suite's
    // reconciler would wait out the lease before it could lead.
    await f.ds.query(`DELETE FROM leader_leases WHERE name = 'failure-detector' AND holder LIKE 'r-%'`);
    f.redis.disconnect();
    await wake.close();
    await f.ds.destroy();
  });
  return f;
}
