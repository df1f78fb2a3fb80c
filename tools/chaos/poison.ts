import { generateKeyPairSync } from 'node:crypto';
import { TOPICS } from '@gantry/contracts';
import {
  CommandSigner,
  KafkaSecurity,
  NODE_ID_HEADER,
  OutgoingMessage,
  SIGNATURE_HEADER,
  createKafka,
  nodeSigningKey,
  signNodeMessage,
} from '@gantry/messaging';
import { withDb } from '@gantry/stack';

/** Marks what the poison fault forges, so that the invariants can tell whether any of it was applied. */
export const FORGED_REASON = 'CHAOS_FORGED';
export const FORGED_EXIT_CODE = 77;
export const FORGED_NODE_PREFIX = 'chaos-forged';

export interface PoisonTargets {
  brokers: string;
  /** The broker's admin (a compromised service credential: may write anywhere, but cannot sign). */
  admin: KafkaSecurity;
  /** The simulated fleet's principal (it writes beats and reports as an agent does; a real agent is its node's own principal, ADR 0034). */
  agent: KafkaSecurity;
  gatewayUrl: string;
  adminToken: string;
  databaseUrl: string;
}

/**
 * Poison on every topic, under load (contract 4.1, 4.2): forgeries (unsigned, signed with the wrong
 * key, signed by an enrolled node for work it does not hold, dated ahead), bytes that do not parse,
 * a value the database refuses (NUL), an oversized beat, commands no control plane signed. Nothing of
 * it may change any state (invariant "no forged message applied") or stall a consumer (recovery).
 * Returns how many messages went to each topic.
 */
export async function sendPoison(t: PoisonTargets): Promise<Record<string, number>> {
  // One real enrolled node of the poisoner's own: its signatures are valid, its claims are not.
  const res = await fetch(`${t.gatewayUrl}/v1/nodes/enrollments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ nodeIds: ['chaos-poisoner'] }),
  });
  if (res.status !== 201) throw new Error(`poison: enrollment refused: ${res.status}`);
  const poisonerKey = nodeSigningKey(((await res.json()) as { items: Array<{ credential: string }> }).items[0].credential);
  const running = await withDb(
    t.databaseUrl,
    async (c) =>
      (await c.query<{ id: string; attempt: number; node: string }>(`SELECT id, attempt, node_ids[1] AS node FROM jobs WHERE state = 'RUNNING' LIMIT 20`)).rows,
  );
  const signedBy = (key: ReturnType<typeof nodeSigningKey>, nodeId: string, body: unknown, keyFor = nodeId): OutgoingMessage => {
    const value = JSON.stringify(body);
    return { key: keyFor, value, headers: { [NODE_ID_HEADER]: nodeId, [SIGNATURE_HEADER]: signNodeMessage(value, key) } };
  };
  const wrongKey = nodeSigningKey('not-the-credential-of-anyone');
  const beat = (nodeId: string, over: object = {}) => ({
    nodeId,
    bootId: 'chaos',
    seq: 1,
    sentAt: Date.now(),
    zone: 'chaos',
    rack: 'chaos',
    gpus: [{ index: 0, model: 'H100', memoryMiB: 80, memoryUsedMiB: 0, utilization: 0, healthy: true }],
    cpu: { cores: 1, utilization: 0 },
    memory: { totalMiB: 1, usedMiB: 0 },
    running: [],
    ...over,
  });
  const forgedReport = (j: { id: string; attempt: number; node: string }) => ({
    nodeId: j.node,
    jobId: j.id,
    attempt: j.attempt,
    state: 'SUCCEEDED',
    exitCode: FORGED_EXIT_CODE,
    reason: FORGED_REASON,
    at: Date.now(),
  });
  const forger = new CommandSigner(generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const forgedCommand = (body: { nodeId: string }, sign: boolean): OutgoingMessage => {
    const value = JSON.stringify(body);
    return { key: body.nodeId, value, headers: sign ? { [SIGNATURE_HEADER]: forger.sign(value) } : {} };
  };
  const garbage: OutgoingMessage[] = [
    { key: 'x', value: '{not json' },
    { key: null, value: '' },
    { key: 'x', value: '"a string"' },
    { key: 'x', value: Buffer.from([0xff, 0xfe, 0x00]) },
  ];

  const byTopic: Record<string, OutgoingMessage[]> = {
    [TOPICS.heartbeats]: [
      { key: `${FORGED_NODE_PREFIX}-1`, value: JSON.stringify(beat(`${FORGED_NODE_PREFIX}-1`)) },
      ...running.slice(0, 5).map((j) => ({ key: j.node, value: JSON.stringify(beat(j.node)) })), // unsigned "nothing runs here" for busy nodes
      signedBy(wrongKey, `${FORGED_NODE_PREFIX}-2`, beat(`${FORGED_NODE_PREFIX}-2`)),
      signedBy(poisonerKey, 'chaos-poisoner', beat('chaos-poisoner', { sentAt: Date.now() + 3_600_000 })),
      signedBy(poisonerKey, 'chaos-poisoner', beat('chaos-poisoner', { zone: 'nul\u0000zone' })),
      signedBy(
        poisonerKey,
        'chaos-poisoner',
        beat('chaos-poisoner', { running: Array.from({ length: 1024 }, (_, i) => ({ jobId: 'x'.repeat(60) + i, attempt: 1 })), rack: 'r'.repeat(64) }),
      ),
      ...garbage,
    ],
    [TOPICS.jobReports]: [
      ...running.map((j) => ({ key: j.node, value: JSON.stringify(forgedReport(j)) })), // unsigned
      ...running.map((j) => signedBy(poisonerKey, 'chaos-poisoner', { ...forgedReport(j), nodeId: 'chaos-poisoner' })), // a node that holds no rank
      ...running.map((j) => signedBy(poisonerKey, 'chaos-poisoner', forgedReport(j), j.node)), // another node's name
      ...garbage,
    ],
    [TOPICS.agentCommands]: [
      ...running.map((j) =>
        forgedCommand(
          { type: 'KILL', nodeId: j.node, jobId: j.id, attempt: j.attempt, issuedAt: Date.now(), reason: FORGED_REASON } as { nodeId: string },
          true,
        ),
      ),
      ...running.map((j) =>
        forgedCommand(
          { type: 'KILL', nodeId: j.node, jobId: j.id, attempt: j.attempt, issuedAt: Date.now(), reason: FORGED_REASON } as { nodeId: string },
          false,
        ),
      ),
      ...garbage,
    ],
    [TOPICS.jobLifecycle]: garbage,
    [TOPICS.deadLetter]: garbage,
    [TOPICS.jobEvents]: garbage,
  };
  const asAgent = createKafka({ brokers: [t.brokers], clientId: 'chaos-poison-agent', security: t.agent });
  const asAdmin = createKafka({ brokers: [t.brokers], clientId: 'chaos-poison-admin', security: t.admin });
  try {
    const agentProducer = await asAgent.connectProducer();
    const adminProducer = await asAdmin.connectProducer();
    for (const [topic, messages] of Object.entries(byTopic)) {
      const producer = topic === TOPICS.heartbeats || topic === TOPICS.jobReports ? agentProducer : adminProducer;
      for (const m of messages) await producer.send(topic, [m]);
    }
  } finally {
    await asAgent.disconnect();
    await asAdmin.disconnect();
  }
  return Object.fromEntries(Object.entries(byTopic).map(([topic, m]) => [topic, m.length]));
}
