import { generateKeyPairSync } from 'node:crypto';
import { AgentCommandMessage } from '@gantry/contracts';
import { CommandSigner, ConsumedMessage, RawMessage, SIGNATURE_HEADER, commandPublicKeys } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import type { ConsumerSpec, Consumers } from '@gantry/runtime';
import { createCommandConsumer } from './command-consumer';
import { NodeRuntime } from './node-runtime';

const pem = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const signer = new CommandSigner(pem());
const forger = new CommandSigner(pem());

function setup(debug = false) {
  let spec: ConsumerSpec<AgentCommandMessage> | null = null;
  const consumers = { create: (_name: string, s: ConsumerSpec<AgentCommandMessage>) => ((spec = s), {}) } as unknown as Consumers;
  const lines: Array<{ level: string; obj: Record<string, unknown> }> = [];
  const logger = {
    isLevelEnabled: (l: string) => l === 'info' || (debug && l === 'debug'),
    info: (obj: Record<string, unknown>) => lines.push({ level: 'info', obj }),
    debug: (obj: Record<string, unknown>) => lines.push({ level: 'debug', obj }),
    warn: () => undefined,
  } as unknown as Logger;
  const handled: AgentCommandMessage[] = [];
  const seen = new Set<string>();
  const n1 = {
    changedBy: (c: AgentCommandMessage) => !seen.has(`${c.jobId}#${c.attempt}`),
    handle: (c: AgentCommandMessage) => (handled.push(c), seen.add(`${c.jobId}#${c.attempt}`)),
  } as unknown as NodeRuntime;
  createCommandConsumer(consumers, {
    groupId: 'gantry-fleet-a1',
    nodes: new Map([['n1', n1]]),
    logger,
    publicKeys: commandPublicKeys(signer.publicKeyPem),
    maxAgeMs: 60_000,
  });
  const item = (value: AgentCommandMessage): ConsumedMessage<AgentCommandMessage> => ({
    value,
    key: value.nodeId,
    headers: {},
    partition: 0,
    offset: '0',
    timestamp: Date.now(),
  });
  const raw = (value: AgentCommandMessage, by: CommandSigner | null = signer, key: string = value.nodeId): RawMessage => {
    const bytes = Buffer.from(JSON.stringify(value));
    return { key, value: bytes, headers: by ? { [SIGNATURE_HEADER]: by.sign(bytes) } : {}, partition: 0, offset: '0', timestamp: Date.now() };
  };
  return { spec: spec!, lines, handled, item, raw };
}

const run = (nodeId: string, jobId: string, issuedAt = Date.now()): AgentCommandMessage => ({
  type: 'RUN',
  nodeId,
  jobId,
  attempt: 1,
  issuedAt,
  image: 'i',
  command: ['true'],
  env: {},
  resources: { gpus: 0, cpuCores: 1, memoryMiB: 1 },
  gang: { size: 1, rank: 0, nodeIds: [nodeId] },
});

describe('createCommandConsumer', () => {
  it('parses with the fast parser and refuses what the class refuses', () => {
    const { spec } = setup();
    expect(spec.parse(Buffer.from(JSON.stringify(run('n1', 'j'))))).toMatchObject({ ok: true });
    expect(spec.parse(Buffer.from('{"type":"RUN"}'))).toMatchObject({ ok: false });
  });

  it("reads only its own nodes' commands (another node sharing the partition is skipped unverified)", () => {
    const { spec, raw } = setup();
    expect(spec.relevant!(raw(run('n1', 'a')))).toBe(true);
    expect(spec.relevant!(raw(run('n2', 'a')))).toBe(false);
  });

  it.each([
    ['signed by the control plane', signer, null],
    ['unsigned', null, 'unsigned'],
    ['signed by another key', forger, 'bad-signature'],
  ] as const)('a command %s: %s', (_name, by, reason) => {
    const { spec, raw } = setup();
    expect(spec.authenticate!(raw(run('n1', 'a'), by))?.reason ?? null).toBe(reason);
  });

  it('refuses a command whose value was changed after signing', () => {
    const { spec, raw } = setup();
    const signed = raw(run('n1', 'a'));
    const tampered = { ...signed, value: Buffer.from(JSON.stringify({ ...run('n1', 'a'), command: ['rm', '-rf', '/'] })) };
    expect(spec.authenticate!(tampered)).toEqual({ reason: 'bad-signature' });
  });

  it('refuses a command issued longer ago than the maximum age (a replay), and one keyed for another node', () => {
    const { spec, item } = setup();
    expect(spec.admit!(item(run('n1', 'a')))).toBeNull();
    expect(spec.admit!(item(run('n1', 'a', Date.now() - 61_000)))?.reason).toBe('expired');
    expect(spec.admit!({ ...item(run('n1', 'a')), key: 'n2' })?.reason).toBe('node-mismatch');
  });

  it('logs a command that changes something at info with its trace id, a repeat only at debug', async () => {
    const { spec, lines, handled, item } = setup(true);
    expect(await spec.handleBatch([item(run('n1', 'a')), item(run('n1', 'a'))])).toEqual([]);
    expect(handled.map((c) => c.jobId)).toEqual(['a', 'a']); // the repeat is handed over too (a finished attempt re-sends its end)
    expect(lines).toEqual([
      { level: 'info', obj: { type: 'RUN', jobId: 'a', attempt: 1, nodeId: 'n1', traceId: null } },
      { level: 'debug', obj: { type: 'RUN', jobId: 'a', attempt: 1, nodeId: 'n1', repeated: true } },
    ]);
  });

  it('writes nothing for a repeat at info level', async () => {
    const { spec, lines, item } = setup(false);
    await spec.handleBatch([item(run('n1', 'a')), item(run('n1', 'a'))]);
    expect(lines.map((l) => l.level)).toEqual(['info']);
  });
});
