import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { HeartbeatMessage } from '@gantry/contracts';
import { ClusterUtilisationStore, REDIS_KEYS, UtilisationTotals } from '@gantry/persistence';
import { openDataSource, openRedis, silentLogger, uniqueTag } from '@gantry/testing';
import { HeartbeatBatchWriter, ReceivedBeat } from '../src/heartbeat-batch-writer';
import { IngesterEnv } from '../src/config';
import { UtilisationSweeper } from '../src/utilisation-sweeper';

let ds: DataSource;
let redis: Redis;
let writer: HeartbeatBatchWriter;
let sweeper: UtilisationSweeper;
let store: ClusterUtilisationStore;
const config = Object.assign(new IngesterEnv(), { GANTRY_NODE_DEAD_MS: 40_000 });

beforeAll(async () => {
  ds = await openDataSource();
  redis = await openRedis();
  writer = new HeartbeatBatchWriter(redis, ds, config);
  sweeper = new UtilisationSweeper(redis, config, silentLogger());
  store = new ClusterUtilisationStore(redis);
});
afterAll(async () => {
  redis.disconnect();
  await ds.destroy();
});

function beat(nodeId: string, gpuUtil: number[], cpuUtil: number, over: Partial<HeartbeatMessage> = {}): HeartbeatMessage {
  return {
    nodeId,
    bootId: 'boot-1',
    seq: 1,
    sentAt: Date.now(),
    zone: 'z1',
    rack: 'r1',
    gpus: gpuUtil.map((utilization, index) => ({ index, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 0, utilization, healthy: true })),
    cpu: { cores: 96, utilization: cpuUtil },
    memory: { totalMiB: 1048576, usedMiB: 1000 },
    running: [],
    ...over,
  } as HeartbeatMessage;
}

let nextOffset = 0;
const received = (...beats: HeartbeatMessage[]): ReceivedBeat[] => beats.map((value) => ({ value, offset: String(nextOffset++), timestamp: Date.now() }));

const delta = (a: UtilisationTotals, b: UtilisationTotals) => ({
  nodes: b.nodes - a.nodes,
  gpus: b.gpus - a.gpus,
  gpuUtilMilli: b.gpuUtilMilli - a.gpuUtilMilli,
  cpuUtilMilli: b.cpuUtilMilli - a.cpuUtilMilli,
});

describe('cluster utilisation sums kept per beat', () => {
  it('adds a new node once, and replaces (not adds) its contribution on every newer beat', async () => {
    const [a, b] = [uniqueTag('n'), uniqueTag('n')];
    const t0 = await store.totals();
    await writer.write(received(beat(a, [0.5, 0.25], 0.1), beat(b, [], 0.3)));
    expect(delta(t0, await store.totals())).toEqual({ nodes: 2, gpus: 2, gpuUtilMilli: 750, cpuUtilMilli: 400 });

    await writer.write(received(beat(a, [1, 1], 0.6, { seq: 2 })));
    expect(delta(t0, await store.totals())).toEqual({ nodes: 2, gpus: 2, gpuUtilMilli: 2000, cpuUtilMilli: 900 });

    // A replayed beat changes neither the node nor the sums.
    await writer.write(received(beat(a, [0, 0], 0, { seq: 1 }), beat(a, [0, 0], 0, { seq: 2 })));
    expect(delta(t0, await store.totals())).toEqual({ nodes: 2, gpus: 2, gpuUtilMilli: 2000, cpuUtilMilli: 900 });
  });

  it('takes a node out of the sums once it is silent for the dead timeout, exactly once, and back in when it beats again', async () => {
    const id = uniqueTag('n');
    const receivedAt = Date.now();
    await writer.write(received(beat(id, [0.4], 0.2)), receivedAt);
    // Not yet dead: one ms short of the timeout.
    await sweeper.sweep(receivedAt + config.GANTRY_NODE_DEAD_MS - 1);
    expect(await redis.hget(REDIS_KEYS.node(id), 'cg')).toBe('1');

    const before = await store.totals();
    expect(await sweeper.sweep(receivedAt + config.GANTRY_NODE_DEAD_MS)).toBeGreaterThanOrEqual(1);
    expect(await redis.hget(REDIS_KEYS.node(id), 'cg')).toBeNull();
    const afterSweep = await store.totals();
    expect(afterSweep.nodes).toBeLessThanOrEqual(before.nodes - 1);
    // A second sweep over the same range subtracts nothing.
    expect(await sweeper.sweep(receivedAt + config.GANTRY_NODE_DEAD_MS)).toBe(0);
    expect(await store.totals()).toEqual(afterSweep);

    await writer.write(received(beat(id, [0.4], 0.2, { seq: 2 })));
    expect(delta(afterSweep, await store.totals())).toEqual({ nodes: 1, gpus: 1, gpuUtilMilli: 400, cpuUtilMilli: 200 });
  });

  it('keeps the contribution through liveness beats, counts no node before its telemetry, and recounts a returning node from its last telemetry', async () => {
    const light = (nodeId: string, seq: number): HeartbeatMessage => ({
      nodeId,
      bootId: 'boot-1',
      seq,
      sentAt: Date.now(),
      zone: 'z1',
      rack: 'r1',
      running: [],
    });
    const [id, unknown] = [uniqueTag('n'), uniqueTag('n')];
    const t0 = await store.totals();
    const receivedAt = Date.now();
    await writer.write(received(beat(id, [0.5, 0.5], 0.4), light(unknown, 1)), receivedAt);
    expect(delta(t0, await store.totals())).toEqual({ nodes: 1, gpus: 2, gpuUtilMilli: 1000, cpuUtilMilli: 400 });
    await writer.write(received(light(id, 2), light(unknown, 2)), receivedAt);
    expect(delta(t0, await store.totals())).toEqual({ nodes: 1, gpus: 2, gpuUtilMilli: 1000, cpuUtilMilli: 400 });

    // Silent for the dead timeout: out of the sums. Back with a liveness beat: in again, as last known.
    await sweeper.sweep(receivedAt + config.GANTRY_NODE_DEAD_MS);
    const swept = await store.totals();
    expect(await redis.hget(REDIS_KEYS.node(id), 'cg')).toBeNull();
    await writer.write(received(light(id, 3)));
    expect(delta(swept, await store.totals())).toEqual({ nodes: 1, gpus: 2, gpuUtilMilli: 1000, cpuUtilMilli: 400 });
  });

  it('counts nodes per health band with range counts over last-seen', async () => {
    const id = uniqueTag('n');
    const at = Date.now() - 3_600_000; // a millisecond of its own, long past, so no other node shares it
    await writer.write(received(beat(id, [], 0)), at);
    expect(await store.countHeard({ above: at - 1, atMost: at })).toBe(1);
    expect(await store.countHeard({ above: at - 1, atMost: at - 1 })).toBe(0);
    expect(await store.countHeard({ above: at, atMost: at })).toBe(0);
  });
});
