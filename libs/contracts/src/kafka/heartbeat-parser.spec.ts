import fc from 'fast-check';
import { HeartbeatMessage } from './heartbeat.message';
import { parseMessage } from './parse-message';
import { parseHeartbeat } from './heartbeat-parser';

const gpu = { index: 0, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 10, utilization: 0.5, healthy: true };
const good = {
  nodeId: 'gpu-0042', bootId: 'b1', seq: 3, sentAt: 1796000000000, zone: 'z', rack: 'r',
  gpus: [gpu, { ...gpu, index: 1 }], cpu: { cores: 96, utilization: 0.41 }, memory: { totalMiB: 1048576, usedMiB: 300000 },
  running: [{ jobId: 'j', attempt: 1 }],
};
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('parseHeartbeat', () => {
  it.each([
    ['a valid beat', good],
    ['unknown fields (ignored, and not kept)', { ...good, extra: 1, cpu: { ...good.cpu, x: 2 }, gpus: [{ ...gpu, vendor: 'n' }] }],
    ['no GPUs, nothing running', { ...good, gpus: [], running: [] }],
    ['a liveness beat (no telemetry)', { ...good, gpus: undefined, cpu: undefined, memory: undefined }],
    ['a liveness beat with nothing running', { ...good, gpus: undefined, cpu: undefined, memory: undefined, running: [] }],
    ['telemetry in part: gpus only', { ...good, cpu: undefined, memory: undefined }],
    ['telemetry in part: no gpus', { ...good, gpus: undefined }],
    ['telemetry in part: no memory', { ...good, memory: undefined }],
    ['telemetry null', { ...good, gpus: null, cpu: null, memory: null }],
    ['bad nodeId', { ...good, nodeId: '-x' }],
    ['missing bootId', { ...good, bootId: undefined }],
    ['fractional seq', { ...good, seq: 1.5 }],
    ['negative sentAt', { ...good, sentAt: -1 }],
    ['string seq', { ...good, seq: '3' }],
    ['empty zone', { ...good, zone: '' }],
    ['long rack', { ...good, rack: 'r'.repeat(65) }],
    ['utilisation above 1', { ...good, gpus: [{ ...gpu, utilization: 1.01 }] }],
    ['GPU not an object', { ...good, gpus: [3] }],
    ['healthy not a boolean', { ...good, gpus: [{ ...gpu, healthy: 'yes' }] }],
    ['too many GPUs', { ...good, gpus: Array.from({ length: 65 }, () => gpu) }],
    ['cpu missing', { ...good, cpu: undefined }],
    ['cores too many', { ...good, cpu: { cores: 70000, utilization: 0 } }],
    ['memory not an object', { ...good, memory: 5 }],
    ['attempt 0', { ...good, running: [{ jobId: 'j', attempt: 0 }] }],
    ['running not an array', { ...good, running: {} }],
    ['an array', [good]],
    ['not JSON', '{"nodeId": '],
    ['null', 'null'],
  ])('%s: same verdict and value as the class', (_n, input) => {
    const fast = parseHeartbeat(buf(input));
    const slow = parseMessage(HeartbeatMessage, buf(input));
    expect(fast.ok).toBe(slow.ok);
    if (fast.ok && slow.ok) expect(plain(fast.value)).toEqual(plain(slow.value));
    else if (!fast.ok && !slow.ok) expect(fast.reason).toBe(slow.reason);
  });

  it('agrees with the class on random mutations of a valid beat', () => {
    const paths: Array<(o: any, v: unknown) => void> = [
      (o, v) => (o.nodeId = v), (o, v) => (o.bootId = v), (o, v) => (o.seq = v), (o, v) => (o.sentAt = v), (o, v) => (o.zone = v),
      (o, v) => (o.gpus[0].utilization = v), (o, v) => (o.gpus[1].index = v), (o, v) => (o.gpus[0].model = v), (o, v) => (o.gpus[1].healthy = v),
      (o, v) => (o.cpu.cores = v), (o, v) => (o.cpu.utilization = v), (o, v) => (o.memory.totalMiB = v), (o, v) => (o.memory.usedMiB = v),
      (o, v) => (o.running[0].attempt = v), (o, v) => (o.running[0].jobId = v), (o, v) => (o.gpus = v), (o, v) => (o.running = v), (o, v) => (o.cpu = v), (o, v) => (o.memory = v),
    ];
    const value = fc.oneof(fc.integer({ min: -5, max: 2 ** 41 }), fc.double({ noNaN: true, min: -2, max: 2 }), fc.string({ maxLength: 70 }), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: paths.length - 1 }), value, (i, v) => {
        const o = plain(good);
        paths[i](o, v);
        const fast = parseHeartbeat(buf(o));
        const slow = parseMessage(HeartbeatMessage, buf(o));
        expect(fast.ok).toBe(slow.ok);
        if (fast.ok && slow.ok) expect(plain(fast.value)).toEqual(plain(slow.value));
      }),
      { numRuns: 2000 },
    );
  });
});
