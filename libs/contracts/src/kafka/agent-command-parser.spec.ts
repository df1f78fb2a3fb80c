import fc from 'fast-check';
import { AgentCommandMessage } from './agent-command.message';
import { parseAgentCommand } from './agent-command-parser';
import { parseMessage } from './parse-message';
import { buildRunCommand } from './run-commands';

/*
 * Cost per message (node 20.20, 2 shared AMD EPYC cores, 100,000 parses after 20,000 to warm up;
 * JSON.parse included), for the RUN the scheduler sends (buildRunCommand) and a KILL:
 *   RUN   parseAgentCommand 2.1 µs   parseMessage(AgentCommandMessage) 35-47 µs
 *   KILL  parseAgentCommand 1.2 µs   parseMessage(AgentCommandMessage) 19-20 µs
 */

const job = { id: '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f', image: 'registry/pytorch:24.05', command: ['python', 'train.py'], env: { EPOCHS: '3' }, gpus: 8, gpuModel: 'H100', cpuCores: 32, memoryMiB: 262144 };
const run = buildRunCommand(job, 2, ['gpu-0042', 'gpu-0043'], 1, 1_796_000_000_000);
const kill = { type: 'KILL', nodeId: 'gpu-0042', jobId: job.id, attempt: 2, issuedAt: 1_796_000_000_000, reason: 'CANCELLED_BY_USER' };
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

function expectSameAsClass(input: unknown) {
  const fast = parseAgentCommand(buf(input));
  const slow = parseMessage(AgentCommandMessage, buf(input));
  expect(fast.ok).toBe(slow.ok);
  if (fast.ok && slow.ok) expect(plain(fast.value)).toEqual(plain(slow.value));
  else if (!fast.ok && !slow.ok) expect(fast.reason).toBe(slow.reason);
}

describe('parseAgentCommand', () => {
  it.each([
    ['a RUN from buildRunCommand', run],
    ['a KILL', kill],
    ['a RUN with no GPU model (null)', { ...run, resources: { ...run.resources, gpuModel: null } }],
    ['a RUN with no GPU model (absent)', { ...run, resources: { gpus: 0, cpuCores: 1, memoryMiB: 1 } }],
    ['a RUN with empty command, env and nodeIds', { ...run, command: [], env: {}, gang: { size: 1, rank: 0, nodeIds: [] } }],
    ['unknown fields (ignored, and not kept)', { ...run, extra: 1, resources: { ...run.resources, x: 2 }, gang: { ...run.gang, y: [] } }],
    ['a KILL with unknown fields', { ...kill, extra: { a: 1 } }],
  ])('%s: accepted by the fast path, same value as the class', (_n, input) => {
    const fast = parseAgentCommand(buf(input));
    expect(fast.ok && fast.value instanceof AgentCommandMessage).toBe(false); // not the class's instance: the fast path took it
    expectSameAsClass(input);
  });

  it.each([
    ['a RUN without resources (the class accepts it)', { ...run, resources: undefined }],
    ['a RUN without gang (the class accepts it)', { ...run, gang: undefined }],
    ['a RUN with a reason (the class keeps it)', { ...run, reason: 'x' }],
    ['a RUN with resources in an array (the class accepts it)', { ...run, resources: [run.resources] }],
    ['a KILL with a RUN field (the class keeps it, unchecked)', { ...kill, image: 7 }],
    ['a KILL with a null RUN field', { ...kill, env: null }],
    ['env with a number', { ...run, env: { A: 5 } }],
    ['env with an object', { ...run, env: { A: { b: 1 } } }],
    ['env with a key class-transformer drops', { ...run, env: { toString: 'x', A: 'b' } }],
    ['env with __proto__', '{"type":"RUN","nodeId":"n","jobId":"j","attempt":1,"image":"i","command":[],"env":{"__proto__":"x","A":"b"},"resources":{"gpus":0,"cpuCores":1,"memoryMiB":1},"gang":{"size":1,"rank":0,"nodeIds":[]}}'],
    ['a jobId of 64 characters with a surrogate pair', { ...run, jobId: `${'j'.repeat(63)}\u{1F600}` }],
    ['a jobId of one variation selector', { ...run, jobId: '\uFE0F' }],
    ['an unknown type', { ...run, type: 'STOP' }],
    ['a lower-case type', { ...kill, type: 'kill' }],
    ['a bad nodeId', { ...run, nodeId: '../etc' }],
    ['an empty jobId', { ...run, jobId: '' }],
    ['a jobId of 65', { ...run, jobId: 'j'.repeat(65) }],
    ['attempt 0', { ...run, attempt: 0 }],
    ['a fractional attempt', { ...kill, attempt: 1.5 }],
    ['a string attempt', { ...run, attempt: '2' }],
    ['a KILL without a reason', { ...kill, reason: undefined }],
    ['a KILL with a numeric reason', { ...kill, reason: 3 }],
    ['a RUN without image', { ...run, image: undefined }],
    ['a command with a number', { ...run, command: ['a', 1] }],
    ['a command that is a string', { ...run, command: 'python train.py' }],
    ['env an array', { ...run, env: [] }],
    ['negative gpus', { ...run, resources: { ...run.resources, gpus: -1 } }],
    ['a numeric gpuModel', { ...run, resources: { ...run.resources, gpuModel: 5 } }],
    ['resources null', { ...run, resources: null }],
    ['gang size 0', { ...run, gang: { ...run.gang, size: 0 } }],
    ['gang a string', { ...run, gang: 'x' }],
    ['a nodeIds entry not a string', { ...run, gang: { ...run.gang, nodeIds: [1] } }],
    ['an array', [run]],
    ['not JSON', '{"type": '],
    ['null', 'null'],
    ['a string', '"RUN"'],
  ])('%s: same verdict and value as the class', (_n, input) => expectSameAsClass(input));

  it('refuses what class-transformer throws on, as the class does', () => {
    const raw = buf('{"type":"RUN","nodeId":"n","jobId":"j","attempt":1,"image":"i","command":[],"env":{"constructor":{"a":1}},"resources":{"gpus":0,"cpuCores":1,"memoryMiB":1},"gang":{"size":1,"rank":0,"nodeIds":[]}}');
    const r = parseAgentCommand(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/^invalid message: /);
    expect(r).toEqual(parseMessage(AgentCommandMessage, raw));
  });

  it('gives the class reason for an empty value', () => {
    expect(parseAgentCommand(null)).toEqual(parseMessage(AgentCommandMessage, null));
  });

  it('agrees with the class on random mutations of a valid RUN and KILL', () => {
    const paths: Array<(o: any, v: unknown) => void> = [
      (o, v) => (o.type = v), (o, v) => (o.nodeId = v), (o, v) => (o.jobId = v), (o, v) => (o.attempt = v), (o, v) => (o.image = v),
      (o, v) => (o.command = v), (o, v) => (o.command[1] = v), (o, v) => (o.env = v), (o, v) => (o.env.EPOCHS = v), (o, v) => (o.env.x = v),
      (o, v) => (o.resources = v), (o, v) => (o.resources.gpus = v), (o, v) => (o.resources.gpuModel = v), (o, v) => (o.resources.cpuCores = v),
      (o, v) => (o.resources.memoryMiB = v), (o, v) => (o.gang = v), (o, v) => (o.gang.size = v), (o, v) => (o.gang.rank = v),
      (o, v) => (o.gang.nodeIds = v), (o, v) => (o.gang.nodeIds[0] = v), (o, v) => (o.reason = v),
    ];
    const value = fc.oneof(
      fc.integer({ min: -5, max: 2 ** 41 }), fc.double({ noNaN: true, min: -2, max: 2 }), fc.string({ maxLength: 70 }), fc.string({ maxLength: 70, unit: 'binary' }),
      fc.constantFrom('RUN', 'KILL', 'x'.repeat(64)), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant([]), fc.constant({}), fc.constant(['a']), fc.constant({ a: 'b' }),
    );
    fc.assert(
      fc.property(fc.boolean(), fc.array(fc.tuple(fc.integer({ min: 0, max: paths.length - 1 }), value), { minLength: 1, maxLength: 3 }), (isKill, edits) => {
        const o = plain(run);
        if (isKill) Object.assign(o, { type: 'KILL', image: undefined, command: undefined, env: undefined, resources: undefined, gang: undefined, reason: 'R' });
        for (const [i, v] of edits) {
          try {
            paths[i](o, structuredClone(v)); // a fresh copy: the constants are shared between runs
          } catch {
            // a path into a field an earlier edit replaced with a non-object: skipped
          }
        }
        expectSameAsClass(o);
      }),
      { numRuns: 3000 },
    );
  });
});
