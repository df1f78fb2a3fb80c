import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { HeartbeatMessage } from '@gantry/contracts';
import { NodeLiveStore, autocommit, loadNodes } from '@gantry/persistence';
import { openDataSource, openRedis, uniqueTag } from '@gantry/testing';
import { HeartbeatBatchWriter } from '../src/heartbeat-batch-writer';
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
    nodeId, bootId: 'boot-1', seq: 1, sentAt: Date.now(), zone: 'z1', rack: 'r1',
    gpus: Array.from({ length: 8 }, (_, index) => ({ index, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 0, utilization: 0.1, healthy: true })),
    cpu: { cores: 96, utilization: 0.2 }, memory: { totalMiB: 1048576, usedMiB: 1000 }, running: [],
    ...over,
  } as HeartbeatMessage;
}

/** A liveness beat: no gpus, cpu or memory (ADR 0010). */
function livenessBeat(nodeId: string, over: Partial<HeartbeatMessage> = {}): HeartbeatMessage {
  return { nodeId, bootId: 'boot-1', seq: 1, sentAt: Date.now(), zone: 'z1', rack: 'r1', running: [], ...over };
}

describe('HeartbeatBatchWriter', () => {
  it('registers a node in Postgres on its first beat and marks it live in Redis', async () => {
    const id = uniqueTag('n');
    const before = Date.now();
    await writer.write([beat(id)]);
    const [node] = await loadNodes(autocommit(ds), [id]);
    expect(node).toMatchObject({ id, zone: 'z1', rack: 'r1', gpuModel: 'H100', gpusTotal: 8, cpuCores: 96, memoryMiB: 1048576, gpusAllocated: 0 });
    expect(await live.lastSeen(id)).toBeGreaterThanOrEqual(before);
  });

  it('never lets an older beat overwrite a newer one (redelivery, reordering)', async () => {
    const id = uniqueTag('n');
    await writer.write([beat(id, { seq: 5, cpu: { cores: 96, utilization: 0.5 } })]);
    await writer.write([beat(id, { seq: 4, cpu: { cores: 96, utilization: 0.9 } })]);
    await writer.write([beat(id, { seq: 5, cpu: { cores: 96, utilization: 0.7 } })]); // redelivered
    const stored = await live.livePayload(id);
    expect(stored!.seq).toBe('5');
    expect(JSON.parse(stored!.telemetry).cpu.utilization).toBe(0.5);
  });

  it('keeps the newest beat of a batch whatever the order', async () => {
    const id = uniqueTag('n');
    await writer.write([beat(id, { seq: 9 }), beat(id, { seq: 7 }), beat(id, { seq: 8 })]);
    expect((await live.livePayload(id))!.seq).toBe('9');
  });

  it('accepts a new boot sent later even with a lower seq, and refuses an older boot', async () => {
    const id = uniqueTag('n');
    const t = Date.now();
    await writer.write([beat(id, { bootId: 'old', seq: 100, sentAt: t })]);
    await writer.write([beat(id, { bootId: 'new', seq: 1, sentAt: t + 1000 })]);
    expect((await live.livePayload(id))!.bootId).toBe('new');
    await writer.write([beat(id, { bootId: 'old', seq: 101, sentAt: t + 500 })]);
    expect((await live.livePayload(id))!.bootId).toBe('new');
  });

  it('writes a capacity change to Postgres, and an unchanged beat does not rewrite the row', async () => {
    const id = uniqueTag('n');
    await writer.write([beat(id)]);
    const [v1] = await loadNodes(autocommit(ds), [id]);
    await writer.write([beat(id, { seq: 2 })]);
    const [v2] = await loadNodes(autocommit(ds), [id]);
    expect(v2.version).toBe(v1.version);
    const sixGpus = beat(id, { seq: 3 }).gpus!.map((g, i) => ({ ...g, healthy: i < 6 }));
    await writer.write([beat(id, { seq: 3, gpus: sixGpus })]);
    const [v3] = await loadNodes(autocommit(ds), [id]);
    expect(v3.gpusTotal).toBe(6);
    expect(v3.version).toBe(v1.version + 1);
  });

  it('a liveness beat refreshes liveness and the running set and keeps the last telemetry', async () => {
    const id = uniqueTag('n');
    const t = Date.now();
    await writer.write([beat(id, { seq: 1, sentAt: t, cpu: { cores: 96, utilization: 0.3 } })], t);
    await writer.write([livenessBeat(id, { seq: 2, sentAt: t + 5000, running: [{ jobId: 'j1', attempt: 2 }] })], t + 5001);
    const fields = (await live.liveMany([id])).get(id)!;
    expect(fields).toMatchObject({ sentAt: t + 5000, receivedAt: t + 5001, telemetryAt: t });
    expect(JSON.parse(fields.running)).toEqual([{ jobId: 'j1', attempt: 2 }]);
    expect(JSON.parse(fields.telemetry!).cpu.utilization).toBe(0.3);
    expect(await live.lastSeen(id)).toBe(t + 5001);
  });

  it('a liveness beat of a node never heard with telemetry marks it live but does not register it', async () => {
    const id = uniqueTag('n');
    await writer.write([livenessBeat(id)]);
    expect(await loadNodes(autocommit(ds), [id])).toEqual([]);
    expect(await live.lastSeen(id)).not.toBeNull();
    expect((await live.liveMany([id])).get(id)).toMatchObject({ telemetry: null, telemetryAt: null });
    // Its next beat with telemetry registers it.
    await writer.write([beat(id, { seq: 2 })]);
    expect(await loadNodes(autocommit(ds), [id])).toHaveLength(1);
  });

  it('keeps the telemetry of a batch whose newest beat is a liveness beat', async () => {
    const id = uniqueTag('n');
    const t = Date.now();
    await writer.write([livenessBeat(id, { seq: 3, sentAt: t + 10 }), beat(id, { seq: 2, sentAt: t + 5, cpu: { cores: 96, utilization: 0.7 } })]);
    const fields = (await live.liveMany([id])).get(id)!;
    expect(fields.sentAt).toBe(t + 10);
    expect(fields.telemetryAt).toBe(t + 5);
    expect(JSON.parse(fields.telemetry!).cpu.utilization).toBe(0.7);
    expect(await loadNodes(autocommit(ds), [id])).toHaveLength(1);
  });
});
