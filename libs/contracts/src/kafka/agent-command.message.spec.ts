import { parseAgentCommand } from './agent-command.message';
import { buildRunCommand } from './run-commands';

const job = {
  id: '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f',
  owner: 'alice',
  image: 'registry/pytorch:24.05',
  command: ['python', 'train.py'],
  env: { EPOCHS: '3' },
  gpus: 8,
  gpuModel: 'H100',
  cpuCores: 32,
  memoryMiB: 262144,
};
const run = buildRunCommand(job, 2, ['gpu-0042', 'gpu-0043'], 1, 1_796_000_000_000);
const kill = { type: 'KILL', nodeId: 'gpu-0042', jobId: job.id, attempt: 2, issuedAt: 1_796_000_000_000, reason: 'CANCELLED_BY_USER' };
const buf = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v));
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

describe('parseAgentCommand', () => {
  it.each([
    ['a RUN from buildRunCommand', run],
    ['a KILL', kill],
    ['a RUN with no GPU model (null)', { ...run, resources: { ...run.resources, gpuModel: null } }],
    ['a RUN with no GPU model (absent)', { ...run, resources: { gpus: 0, cpuCores: 1, memoryMiB: 1 } }],
    ['a RUN with empty command, env and nodeIds', { ...run, command: [], env: {}, gang: { size: 1, rank: 0, nodeIds: [] } }],
    ['env keys that name Object.prototype members', { ...run, env: { toString: 'x', constructor: 'y' } }],
    [
      'a RUN without devices, rendezvous or deadline (an older control plane)',
      { ...run, gpuIndices: undefined, maxRuntimeSeconds: undefined, gang: { size: 2, rank: 1, nodeIds: run.gang.nodeIds } },
    ],
    ['a RUN with a deadline', { ...run, maxRuntimeSeconds: 2 }],
  ])('accepts %s, as sent', (_n, input) => expect(parseAgentCommand(buf(input))).toEqual({ ok: true, value: plain(input) }));

  it.each([
    ['a RUN', { ...run, extra: 1, resources: { ...run.resources, x: 2 }, gang: { ...run.gang, y: [] }, reason: 'a KILL field' }],
    ['a KILL', { ...kill, extra: { a: 1 }, image: 7, env: null }],
  ])("ignores unknown fields of %s, the other type's included (left in place, unread)", (_n, input) => {
    expect(parseAgentCommand(buf(input))).toEqual({ ok: true, value: plain(input) });
  });

  it.each([
    ['an unknown type', { ...run, type: 'STOP' }, 'type: must be one of RUN, KILL'],
    ['a lower-case type', { ...kill, type: 'kill' }, 'type: must be one of RUN, KILL'],
    ['no type', { ...kill, type: undefined }, 'type: must be one of RUN, KILL'],
    ['a RUN without resources', { ...run, resources: undefined }, 'resources: is required'],
    ['a RUN without gang', { ...run, gang: undefined }, 'gang: is required'],
    ['resources in an array', { ...run, resources: [run.resources] }, 'resources: must be object'],
    ['env with a number', { ...run, env: { A: 5 } }, 'env.A: must be string'],
    ['env with an object', { ...run, env: { A: { b: 1 } } }, 'env.A: must be string'],
    ['env an array', { ...run, env: [] }, 'env: must be object'],
    ['a NUL in an env value', { ...run, env: { A: 'x\u0000' } }, 'env.A: must not contain the NUL character'],
    ['a NUL in an env name', { ...run, env: { 'A\u0000': 'x' } }, 'env: key "A\\u0000" must not contain the NUL character'],
    ['a NUL in the command', { ...run, command: ['sh', '-c\u0000'] }, 'command[1]: must not contain the NUL character'],
    ['a NUL in the image', { ...run, image: 'img\u0000' }, 'image: must not contain the NUL character'],
    ['a NUL in a gang node id', { ...run, gang: { ...run.gang, nodeIds: ['a\u0000'] } }, 'gang.nodeIds[0]: must not contain the NUL character'],
    ['a NUL in the GPU model', { ...run, resources: { ...run.resources, gpuModel: 'H\u0000' } }, 'resources.gpuModel: must not contain the NUL character'],
    ['a NUL in a KILL reason', { ...kill, reason: 'x\u0000' }, 'reason: must not contain the NUL character'],
    ['a jobId of 65 characters', { ...run, jobId: 'j'.repeat(65) }, 'jobId: must be 1 to 64 characters'],
    ['a bad nodeId', { ...run, nodeId: '../etc' }, 'nodeId: must match pattern'],
    ['an empty jobId', { ...run, jobId: '' }, 'jobId: must be 1 to 64 characters'],
    ['attempt 0', { ...run, attempt: 0 }, 'attempt: must be >= 1'],
    ['a negative GPU index', { ...run, gpuIndices: [-1] }, 'gpuIndices[0]: must be >= 0'],
    ['a GPU index past 63', { ...run, gpuIndices: [64] }, 'gpuIndices[0]: must be <= 63'],
    ['GPU indices not in an array', { ...run, gpuIndices: '0,1' }, 'gpuIndices: must be array'],
    ['a deadline of 0 seconds', { ...run, maxRuntimeSeconds: 0 }, 'maxRuntimeSeconds: must be >= 1'],
    ['a master port of 0', { ...run, gang: { ...run.gang, masterPort: 0 } }, 'gang.masterPort: must be >= 1'],
    ['a NUL in the master address', { ...run, gang: { ...run.gang, masterAddr: 'h\u0000' } }, 'gang.masterAddr: must be 1 to 255 characters, none of them NUL'],
    ['a fractional attempt', { ...kill, attempt: 1.5 }, 'attempt: must be integer'],
    ['a KILL without a reason', { ...kill, reason: undefined }, 'reason: is required'],
    ['a KILL with a numeric reason', { ...kill, reason: 3 }, 'reason: must be string'],
    ['a RUN without image', { ...run, image: undefined }, 'image: is required'],
    ['a command with a number', { ...run, command: ['a', 1] }, 'command[1]: must be string'],
    ['a command that is a string', { ...run, command: 'python train.py' }, 'command: must be array'],
    ['negative gpus', { ...run, resources: { ...run.resources, gpus: -1 } }, 'resources.gpus: must be >= 0'],
    ['gang size 0', { ...run, gang: { ...run.gang, size: 0 } }, 'gang.size: must be >= 1'],
  ])('refuses %s, naming the field and the rule', (_n, input, reason) => {
    const r = parseAgentCommand(buf(input));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain(reason);
  });
});
