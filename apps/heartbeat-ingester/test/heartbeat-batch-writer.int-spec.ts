import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { HeartbeatMessage } from '@gantry/contracts';
import { NodeLiveStore, autocommit, loadNodes } from '@gantry/persistence';
import { openDataSource, openRedis, uniqueTag } from '@gantry/testing';
import { HeartbeatBatchWriter, ReceivedBeat } from '../src/heartbeat-batch-writer';
import { IngesterEnv } from '../src/config';

let ds: DataSource;
let redis: Redis;
let writer: HeartbeatBatchWriter;
let live: NodeLiveStore;

beforeAll(async () => {
  ds = await openDataSource();
  redis = await openRedis();
  writer = new HeartbeatBatchWriter(redis, ds, Object.assign(new IngesterEnv(), { GANTRY_NODE_DEAD_MS: 40_000 }));
  live = new NodeLiveStore(redis, 120_000);
});
afterAll(async () => {
  redis.disconnect();
  await ds.destroy();
});

function beat(nodeId: string, over: Partial<HeartbeatMessage> = {}): HeartbeatMessage {
  return {
    nodeId,
    bootId: 'boot-1',
    seq: 1,
    sentAt: Date.now(),
    zone: 'z1',
    rack: 'r1',
    gpus: Array.from({ length: 8 }, (_, index) => ({ index, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 0, utilization: 0.1, healthy: true })),
    cpu: { cores: 96, utilization: 0.2 },
    memory: { totalMiB: 1048576, usedMiB: 1000 },
    running: [],
    ...over,
  } as HeartbeatMessage;
}

/** Beats as consumed, in receive order: each gets the next offset of its (one) partition. */
let nextOffset = 0;
const received = (...beats: HeartbeatMessage[]): ReceivedBeat[] => beats.map((value) => ({ value, offset: String(nextOffset++), timestamp: Date.now() }));

/** A liveness beat: no gpus, cpu or memory (ADR 0010). */
function livenessBeat(nodeId: string, over: Partial<HeartbeatMessage> = {}): HeartbeatMessage {
  return { nodeId, bootId: 'boot-1', seq: 1, sentAt: Date.now(), zone: 'z1', rack: 'r1', running: [], ...over };
}

describe('HeartbeatBatchWriter', () => {
  it('registers a node in Postgres on its first beat and marks it live in Redis', async () => {
    const id = uniqueTag('n');
    const before = Date.now();
    await writer.write(received(beat(id)));
    const [node] = await loadNodes(autocommit(ds), [id]);
    expect(node).toMatchObject({ id, zone: 'z1', rack: 'r1', gpuModel: 'H100', gpusTotal: 8, cpuCores: 96, memoryMiB: 1048576, gpusAllocated: 0 });
    expect(await live.lastSeen(id)).toBeGreaterThanOrEqual(before);
  });

  it('records which devices are usable and where the node listens; a GPU turning unhealthy leaves the usable set', async () => {
    const id = uniqueTag('n');
    await writer.write(received(beat(id, { address: '10.0.0.9' })));
    expect((await loadNodes(autocommit(ds), [id]))[0]).toMatchObject({ gpusTotal: 8, gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7], address: '10.0.0.9' });
    const sick = beat(id, { seq: 2, address: '10.0.0.9' });
    sick.gpus![5] = { ...sick.gpus![5], healthy: false };
    await writer.write(received(sick));
    const [node] = await loadNodes(autocommit(ds), [id]);
    expect(node).toMatchObject({ gpusTotal: 7, gpuIndices: [0, 1, 2, 3, 4, 6, 7], address: '10.0.0.9' });
  });

  it('refuses a replay (same boot, seq not higher, received later) and skips a redelivery, writing neither', async () => {
    const id = uniqueTag('n');
    const [first] = received(beat(id, { seq: 5, cpu: { cores: 96, utilization: 0.5 } }));
    expect((await writer.write([first])).replayed).toEqual([]);
    const replay = await writer.write(
      received(beat(id, { seq: 4, cpu: { cores: 96, utilization: 0.9 } }), beat(id, { seq: 5, cpu: { cores: 96, utilization: 0.8 } })),
    );
    expect(replay.replayed.map((r) => [r.beat.value.seq, r.why])).toEqual([
      [4, 'seq-not-higher'],
      [5, 'seq-not-higher'],
    ]);
    // The same message read again (its own offset): a Kafka redelivery, neither written nor refused.
    expect((await writer.write([{ ...first, value: { ...first.value, cpu: { cores: 96, utilization: 0.7 } } }])).replayed).toEqual([]);
    const stored = await live.livePayload(id);
    expect(stored!.seq).toBe('5');
    expect(JSON.parse(stored!.telemetry).cpu.utilization).toBe(0.5);
  });

  it('judges a batch in receive order: a lower seq after a higher one is a replay, whatever sentAt says', async () => {
    const id = uniqueTag('n');
    const t = Date.now();
    const { replayed } = await writer.write(
      received(beat(id, { seq: 7, sentAt: t }), beat(id, { seq: 9, sentAt: t - 5000 }), beat(id, { seq: 8, sentAt: t + 5000 })),
    );
    expect(replayed.map((r) => r.beat.value.seq)).toEqual([8]);
    expect((await live.livePayload(id))!.seq).toBe('9');
  });

  it('takes a new boot when it arrives, whatever its seq or sentAt, and refuses a beat of the boot it replaced', async () => {
    const id = uniqueTag('n');
    const t = Date.now();
    await writer.write(received(beat(id, { bootId: 'old', seq: 100, sentAt: t })));
    await writer.write(received(beat(id, { bootId: 'new', seq: 1, sentAt: t - 1000 })));
    expect((await live.livePayload(id))!.bootId).toBe('new');
    const { replayed } = await writer.write(received(beat(id, { bootId: 'old', seq: 101, sentAt: t + 500 })));
    expect(replayed.map((r) => r.why)).toEqual(['old-boot']);
    expect((await live.livePayload(id))!.bootId).toBe('new');
  });

  it('a writer whose cursor is stale cannot move a node on past what another wrote: it judges again against Redis', async () => {
    const id = uniqueTag('n');
    await writer.write(received(beat(id, { seq: 1 })));
    const other = new HeartbeatBatchWriter(redis, ds, Object.assign(new IngesterEnv(), { GANTRY_NODE_DEAD_MS: 40_000 }));
    // The other writer (a rebalance) takes the node to seq 5; this one still remembers seq 1.
    await other.write(received(beat(id, { seq: 5, cpu: { cores: 96, utilization: 0.5 } })));
    // Judged against its memory, seq 3 looks newer; its write loses the compare-and-set, and judged
    // again against what Redis holds, it is a replay.
    const { replayed } = await writer.write(received(beat(id, { seq: 3, cpu: { cores: 96, utilization: 0.3 } })));
    expect(replayed.map((r) => r.beat.value.seq)).toEqual([3]);
    expect(JSON.parse((await live.livePayload(id))!.telemetry).cpu.utilization).toBe(0.5);
    // Its next beat is judged against what is stored, and written.
    await writer.write(received(beat(id, { seq: 6, cpu: { cores: 96, utilization: 0.6 } })));
    expect(JSON.parse((await live.livePayload(id))!.telemetry).cpu.utilization).toBe(0.6);
  });

  it('writes a capacity change to Postgres, and an unchanged beat does not rewrite the row', async () => {
    const id = uniqueTag('n');
    await writer.write(received(beat(id)));
    const [v1] = await loadNodes(autocommit(ds), [id]);
    await writer.write(received(beat(id, { seq: 2 })));
    const [v2] = await loadNodes(autocommit(ds), [id]);
    expect(v2.version).toBe(v1.version);
    const sixGpus = beat(id, { seq: 3 }).gpus!.map((g, i) => ({ ...g, healthy: i < 6 }));
    await writer.write(received(beat(id, { seq: 3, gpus: sixGpus })));
    const [v3] = await loadNodes(autocommit(ds), [id]);
    expect(v3.gpusTotal).toBe(6);
    expect(v3.version).toBe(v1.version + 1);
  });

  it('a liveness beat refreshes liveness and the running set and keeps the last telemetry', async () => {
    const id = uniqueTag('n');
    const t = Date.now();
    await writer.write(received(beat(id, { seq: 1, sentAt: t, cpu: { cores: 96, utilization: 0.3 } })), t);
    await writer.write(received(livenessBeat(id, { seq: 2, sentAt: t + 5000, running: [{ jobId: 'j1', attempt: 2 }] })), t + 5001);
    const fields = (await live.liveMany([id])).get(id)!;
    expect(fields).toMatchObject({ sentAt: t + 5000, receivedAt: t + 5001, telemetryAt: t });
    expect(JSON.parse(fields.running)).toEqual([{ jobId: 'j1', attempt: 2 }]);
    expect(JSON.parse(fields.telemetry!).cpu.utilization).toBe(0.3);
    expect(await live.lastSeen(id)).toBe(t + 5001);
  });

  it('a liveness beat of a node never heard with telemetry marks it live but does not register it', async () => {
    const id = uniqueTag('n');
    await writer.write(received(livenessBeat(id)));
    expect(await loadNodes(autocommit(ds), [id])).toEqual([]);
    expect(await live.lastSeen(id)).not.toBeNull();
    expect((await live.liveMany([id])).get(id)).toMatchObject({ telemetry: null, telemetryAt: null });
    // Its next beat with telemetry registers it.
    await writer.write(received(beat(id, { seq: 2 })));
    expect(await loadNodes(autocommit(ds), [id])).toHaveLength(1);
  });

  it('keeps the telemetry of a batch whose newest beat is a liveness beat', async () => {
    const id = uniqueTag('n');
    const t = Date.now();
    await writer.write(received(beat(id, { seq: 2, sentAt: t + 5, cpu: { cores: 96, utilization: 0.7 } }), livenessBeat(id, { seq: 3, sentAt: t + 10 })));
    const fields = (await live.liveMany([id])).get(id)!;
    expect(fields.sentAt).toBe(t + 10);
    expect(fields.telemetryAt).toBe(t + 5);
    expect(JSON.parse(fields.telemetry!).cpu.utilization).toBe(0.7);
    expect(await loadNodes(autocommit(ds), [id])).toHaveLength(1);
  });
});
