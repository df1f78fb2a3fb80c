import { parseHeartbeat } from './heartbeat.message';

const gpu = { index: 0, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 10, utilization: 0.5, healthy: true };
const good = {
  nodeId: 'gpu-0042',
  bootId: 'b1',
  seq: 3,
  sentAt: 1796000000000,
  zone: 'z',
  rack: 'r',
  gpus: [gpu, { ...gpu, index: 1 }],
  cpu: { cores: 96, utilization: 0.41 },
  memory: { totalMiB: 1048576, usedMiB: 300000 },
  running: [{ jobId: 'j', attempt: 1 }],
};
const liveness = { ...good, gpus: undefined, cpu: undefined, memory: undefined };
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('parseHeartbeat', () => {
  it.each([
    ['a valid beat', good],
    ['no GPUs, nothing running', { ...good, gpus: [], running: [] }],
    ['a liveness beat (no telemetry)', liveness],
    ['a liveness beat with nothing running', { ...liveness, running: [] }],
    [
      '64 GPUs, 1024 running attempts',
      { ...good, gpus: Array.from({ length: 64 }, () => gpu), running: Array.from({ length: 1024 }, () => ({ jobId: 'j', attempt: 1 })) },
    ],
    ["an address (a gang's MASTER_ADDR when the node holds rank 0)", { ...good, address: '10.0.0.42' }],
    ['an unhealthy GPU (never assigned)', { ...good, gpus: [gpu, { ...gpu, index: 1, healthy: false }] }],
    ['a zone of 64 characters, some outside the BMP (counted as characters)', { ...good, zone: `${'z'.repeat(62)}\u{1F600}\u{1F600}` }],
  ])('accepts %s, as sent', (_n, input) => {
    expect(parseHeartbeat(buf(input))).toEqual({ ok: true, value: plain(input) });
  });

  it('ignores unknown fields at every depth, and drops those of the telemetry and running set (stored in Redis as sent)', () => {
    const input = {
      ...good,
      extra: 1,
      cpu: { ...good.cpu, x: 2 },
      memory: { ...good.memory, y: {} },
      gpus: [{ ...gpu, vendor: 'n' }],
      running: [{ jobId: 'j', attempt: 1, pid: 7 }],
    };
    expect(parseHeartbeat(buf(input))).toEqual({ ok: true, value: { ...plain(good), extra: 1, gpus: [gpu], running: [{ jobId: 'j', attempt: 1 }] } });
  });

  it.each([
    [
      'telemetry in part: gpus only',
      { ...good, cpu: undefined, memory: undefined },
      '(message): must have properties cpu, memory when property gpus is present',
    ],
    ['telemetry in part: no gpus', { ...good, gpus: undefined }, '(message): must have properties gpus, memory when property cpu is present'],
    ['telemetry null', { ...good, gpus: null, cpu: null, memory: null }, 'gpus: must be array; cpu: must be object; memory: must be object'],
    [
      'a NUL in zone (Postgres would refuse it, stalling the partition)',
      { ...good, zone: 'us-east\u0000' },
      'zone: must be 1 to 64 characters, none of them NUL',
    ],
    ['a NUL in a GPU model', { ...good, gpus: [{ ...gpu, model: 'H\u0000' }] }, 'gpus[0].model: must be 1 to 64 characters, none of them NUL'],
    ['a NUL in a running job id', { ...good, running: [{ jobId: '\u0000', attempt: 1 }] }, 'running[0].jobId: must be 1 to 64 characters, none of them NUL'],
    ['bad nodeId', { ...good, nodeId: '-x' }, 'nodeId: must match pattern'],
    ['an empty address', { ...good, address: '' }, 'address: must be 1 to 255 characters, none of them NUL'],
    ['a NUL in the address', { ...good, address: '10.0.0.1\u0000' }, 'address: must be 1 to 255 characters, none of them NUL'],
    ['missing bootId', { ...good, bootId: undefined }, 'bootId: is required'],
    ['fractional seq', { ...good, seq: 1.5 }, 'seq: must be integer'],
    ['string seq', { ...good, seq: '3' }, 'seq: must be integer'],
    ['seq past the exact integers', { ...good, seq: 2 ** 53 }, 'seq: must be <= 9007199254740991'],
    ['negative sentAt', { ...good, sentAt: -1 }, 'sentAt: must be >= 0'],
    ['empty zone', { ...good, zone: '' }, 'zone: must be 1 to 64 characters'],
    ['long rack', { ...good, rack: 'r'.repeat(65) }, 'rack: must be 1 to 64 characters'],
    ['utilisation above 1', { ...good, gpus: [{ ...gpu, utilization: 1.01 }] }, 'gpus[0].utilization: must be <= 1'],
    ['GPU not an object', { ...good, gpus: [3] }, 'gpus[0]: must be object'],
    ['healthy not a boolean', { ...good, gpus: [{ ...gpu, healthy: 'yes' }] }, 'gpus[0].healthy: must be boolean'],
    ['too many GPUs', { ...good, gpus: Array.from({ length: 65 }, () => gpu) }, 'gpus: must NOT have more than 64 items'],
    ['cores too many', { ...good, cpu: { cores: 70000, utilization: 0 } }, 'cpu.cores: must be <= 65536'],
    ['memory not an object', { ...good, memory: 5 }, 'memory: must be object'],
    ['attempt 0', { ...good, running: [{ jobId: 'j', attempt: 0 }] }, 'running[0].attempt: must be >= 1'],
    ['running not an array', { ...good, running: {} }, 'running: must be array'],
    ['several rules broken: each named', { ...good, seq: -1, zone: '' }, 'seq: must be >= 0; zone: must be 1 to 64 characters, none of them NUL'],
    ['an array', [good], 'message value must be a JSON object'],
    ['not JSON', '{"nodeId": ', 'invalid JSON'],
    ['null', 'null', 'message value must be a JSON object'],
  ])('refuses %s, naming the field and the rule', (_n, input, reason) => {
    const r = parseHeartbeat(buf(input));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });

  it('refuses an empty value', () => expect(parseHeartbeat(null)).toEqual({ ok: false, reason: 'empty message value' }));
});
