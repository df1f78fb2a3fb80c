import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { TOPICS, TOPIC_PARTITIONS, nodeCommandGroup, nodeKafkaPrincipal } from '@gantry/contracts';
import { Stack, waitFor } from '@gantry/stack';
import { GroupAttempt, GroupIntruder, HandAgent, TestStack, kafkaAs, metricValue, startTestStack, testEnv, testKafka, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/*
 * Contract 5.1's last promise (ADR 0034): no enrolled node can keep another node's commands from it.
 * The victim is a real agent (GANTRY_SIM_NODES=0): it connects as its node's own principal with
 * tokens from the gateway and reads its commands in its own group. The hostile agent holds every
 * credential an agent is given (its own node's credential and the Kafka tokens it gets with it) and
 * the one shared Kafka user left (the simulated fleet's, which no real agent is given). It speaks
 * the group protocol itself against the victim's group, as any client could, while the victim's job
 * is cancelled; the victim must get its KILL by the normal path in the time it takes without an attacker.
 * Tokens live 30 s here, so the victim renews them during the test and a revoked node's last one runs out within it.
 */
const TOKEN_TTL_MS = 30_000;
/** The broker's allowance for clock differences on a token's expiry (scripts/kafka/start.sh). */
const BROKER_CLOCK_SKEW_MS = 5_000;

let e2e: TestStack;
let stack: Stack;
let admin: GatewayClient;
let hand: HandAgent;
let victim: string;
let hostile: string;
const dir = mkdtempSync(join(tmpdir(), 'gantry-delivery-e2e-'));
/** Every partition of the command topic: the attacker asks for all of them, the victim's among them. */
const COMMAND_PARTITIONS = Array.from({ length: TOPIC_PARTITIONS[TOPICS.agentCommands] }, (_, i) => i);
type KafkaSecurity = NonNullable<Parameters<typeof kafkaAs>[1]>;
const REFUSED = 'GROUP_AUTHORIZATION_FAILED';

jest.setTimeout(300_000);

beforeAll(async () => {
  const prefix = uniqueTag('dlv');
  victim = `${prefix}-victim`;
  hostile = `${prefix}-hostile`;
  e2e = await startTestStack({
    suite: 'agent-delivery',
    simNodes: 0,
    fleetPrefix: prefix,
    agentEnv: { GANTRY_NODE_ID: victim, GANTRY_NVIDIA_SMI: join(dir, 'no-nvidia-smi'), GANTRY_AGENT_CONTAINER_RUNTIME: 'none', GANTRY_AGENT_CGROUPS: 'off' },
    serviceEnv: { 'api-gateway': { GANTRY_AGENT_KAFKA_TOKEN_TTL_MS: String(TOKEN_TTL_MS) } },
  });
  stack = e2e.stack;
  admin = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  hand = new HandAgent(stack.gatewayUrl, e2e.adminToken);
  await hand.enroll(hostile);
  await waitFor(`${victim} healthy`, async () => (await admin.request('GET', `/v1/nodes/${victim}`)).body?.health === 'HEALTHY', { timeoutMs: 60_000 });
});

afterAll(async () => {
  await hand?.close();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The hostile node's Kafka client settings: its own principal, with a token it got for its own credential. */
async function hostileTokenSecurity(): Promise<{ security: KafkaSecurity; token: string; principal: string }> {
  const answer = await hand.requestKafkaToken(hostile);
  expect(answer.status).toBe(200);
  const token = String(answer.body.token);
  return { security: { sasl: { mechanism: 'oauthbearer', token: async () => token } }, token, principal: String(answer.body.principal) };
}

/** The victim's group as the broker's admin sees it: its members (id and client). */
async function victimGroup(): Promise<{ state: string; members: Array<{ memberId: string; clientId: string }> }> {
  const { groups } = await testKafka('delivery-admin').withAdmin((a) => a.describeGroups([nodeCommandGroup(victim)]));
  return { state: groups[0].state, members: groups[0].members.map((m) => ({ memberId: m.memberId, clientId: m.clientId })) };
}

async function runningJob(name: string): Promise<string> {
  const created = await admin.request('POST', '/v1/jobs', {
    name,
    image: 'none',
    command: ['sleep', '600'],
    resources: { gpus: 0, cpuCores: 0, memoryMiB: 16 },
  });
  expect(created.status).toBe(201);
  await waitFor(
    `${name} running on ${victim}`,
    async () => {
      const r = await admin.request('GET', `/v1/jobs/${created.body.id}`);
      return r.body.state === 'RUNNING' && r.body.nodeIds?.[0] === victim;
    },
    { timeoutMs: 60_000, intervalMs: 100 },
  );
  return created.body.id as string;
}

/** Cancels the job and returns how long until its attempt ended CANCELLED (the agent got the KILL, stopped it and said so). */
async function cancelTakes(id: string): Promise<number> {
  const t0 = Date.now();
  expect((await admin.request('POST', `/v1/jobs/${id}/cancel`)).status).toBeLessThan(300);
  await waitFor(`${id} cancelled`, async () => (await admin.request('GET', `/v1/jobs/${id}`)).body.state === 'CANCELLED', {
    timeoutMs: 60_000,
    intervalMs: 50,
  });
  return Date.now() - t0;
}

describe("a node's command delivery (contract 5.1, ADR 0034)", () => {
  it('runs the real agent as its own principal, in its own group, on tokens it renews', async () => {
    const group = await victimGroup();
    expect(group.state).toBe('Stable');
    expect(group.members).toHaveLength(1);
    const log = readFileSync(stack.get('node-agent').logFile, 'utf8');
    expect(log).toContain(`"principal":"${nodeKafkaPrincipal(victim, 1)}"`);
  });

  it("keeps a hostile node, holding every credential an agent has, out of the victim's group; the victim still gets its KILL in normal time", async () => {
    // Without an attacker: what the normal path takes on this machine now.
    const baseline = await cancelTakes(await runningJob(uniqueTag('baseline')));
    const [member] = (await victimGroup()).members;

    const asNode = await hostileTokenSecurity();
    const fleetUser = testEnv.kafkaSecurity('fleet');
    const intruders = await Promise.all([
      GroupIntruder.connect(testEnv.kafkaBrokers, asNode.security, 'hostile-node'),
      GroupIntruder.connect(testEnv.kafkaBrokers, fleetUser, 'hostile-fleet-user'),
    ]);
    // Positive control: the hostile node's own group is open to it, so a refusal below is about whose group it is.
    const own = await intruders[0].tryEverything(nodeCommandGroup(hostile), member.memberId, TOPICS.agentCommands, [0]);
    expect(own.findCoordinator).toBe('ok');
    expect(own.join).toBe('ok');

    const job = await runningJob(uniqueTag('under-attack'));
    const attempts: GroupAttempt[] = [];
    let attacking = true;
    const attacks = intruders.map(async (intruder) => {
      while (attacking) attempts.push(await intruder.tryEverything(nodeCommandGroup(victim), member.memberId, TOPICS.agentCommands, COMMAND_PARTITIONS));
    });
    // The attack is under way before the cancel, and goes on until the job has ended.
    await waitFor('attacks under way', () => attempts.length >= 4, { timeoutMs: 30_000, intervalMs: 20 });
    const underAttack = await cancelTakes(job);
    attacking = false;
    await Promise.all(attacks);
    await Promise.all(intruders.map((i) => i.close()));

    expect(attempts.length).toBeGreaterThanOrEqual(4);
    for (const a of attempts) {
      expect(a).toEqual({
        findCoordinator: REFUSED,
        join: REFUSED,
        syncAsLeader: REFUSED,
        heartbeatAsMember: REFUSED,
        leaveAsMember: REFUSED,
        commitOffsets: REFUSED,
        fetchOffsets: REFUSED,
      });
    }
    // The victim's member is the one it was: nobody joined, synced, left or rebalanced it.
    expect(await victimGroup()).toEqual({ state: 'Stable', members: [member] });
    // Normal time: what the same path took without an attacker, with room for a loaded machine.
    expect(underAttack).toBeLessThan(Math.max(5_000, 3 * baseline));
  });

  it('gives no node a token for another node, none twice for one signature, and the broker no token it did not sign', async () => {
    // Its own credential, the victim's id.
    expect((await hand.requestKafkaToken(victim, { signAs: hostile })).status).toBe(401);
    const { signature, at } = await (async () => {
      const at = Date.now();
      const first = await hand.requestKafkaToken(hostile, { at });
      expect(first.status).toBe(200);
      return { signature: first.signature, at };
    })();
    expect((await hand.requestKafkaToken(hostile, { at, signature })).status).toBe(401);
    expect((await hand.requestKafkaToken(hostile, { at: Date.now() - 120_000 })).status).toBe(401);
    // Garbage is a 400 before anything is looked up; no signature at all, a 401.
    const garbage = await fetch(`${stack.gatewayUrl}/v1/nodes/${hostile}/kafka-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'gantry-signature': 'v1=00' },
      body: '{"at":"soon"}',
    });
    expect([garbage.status, garbage.headers.get('content-type')]).toEqual([400, expect.stringMatching(/problem\+json/)]);
    expect(
      (
        await fetch(`${stack.gatewayUrl}/v1/nodes/${hostile}/kafka-token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"at":${Date.now()}}`,
        })
      ).status,
    ).toBe(401);

    // A token for the victim's principal, signed by a key of the hostile node's own making (with the real key's id).
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const { token } = await hostileTokenSecurity();
    const kid = JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).kid as string;
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid })
      .setSubject(nodeKafkaPrincipal(victim, 1))
      .setIssuer('gantry')
      .setAudience('gantry-kafka')
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    await expect(kafkaAs('forger', { sasl: { mechanism: 'oauthbearer', token: async () => forged } }).withAdmin((a) => a.listTopics())).rejects.toThrow();
  });

  it("takes a revoked node's group away at once, and its connection when its last token runs out", async () => {
    const asNode = await hostileTokenSecurity();
    const before = await GroupIntruder.connect(testEnv.kafkaBrokers, asNode.security, 'revoked-node');
    try {
      // Before: its own group is its own (the positive control for what follows).
      expect(await before.tryEverything(nodeCommandGroup(hostile), 'nobody', TOPICS.agentCommands, [0])).toMatchObject({
        findCoordinator: 'ok',
        fetchOffsets: 'ok',
      });
      const revokedAt = Date.now();
      expect((await admin.request('DELETE', `/v1/nodes/${hostile}/enrollment`)).status).toBe(204);
      // At once: its principal has no group left, even on the connection it already holds.
      expect(await before.tryEverything(nodeCommandGroup(hostile), 'nobody', TOPICS.agentCommands, [0])).toMatchObject({
        findCoordinator: REFUSED,
        join: REFUSED,
        commitOffsets: REFUSED,
        fetchOffsets: REFUSED,
      });
      expect((await hand.requestKafkaToken(hostile)).status).toBe(401);
      // Its connections end with its last token: a client that asks for new ones as an agent does
      // (and keeps the last it got) can do nothing at all once that has run out.
      let last = asNode.token;
      const renewing: KafkaSecurity = {
        sasl: {
          mechanism: 'oauthbearer',
          token: async () => {
            const answer = await hand.requestKafkaToken(hostile);
            if (answer.status === 200) last = String(answer.body.token);
            return last;
          },
        },
      };
      const held = kafkaAs('revoked-node-reads', renewing);
      await waitFor(
        'the revoked token refused',
        async () =>
          held
            .withAdmin((a) => a.fetchTopicMetadata({ topics: [TOPICS.agentCommands] }))
            .then(
              () => false,
              () => true,
            ),
        {
          timeoutMs: TOKEN_TTL_MS + BROKER_CLOCK_SKEW_MS + 20_000,
          intervalMs: 1_000,
        },
      );
      expect(Date.now() - revokedAt).toBeLessThan(TOKEN_TTL_MS + BROKER_CLOCK_SKEW_MS + 20_000);
    } finally {
      await before.close();
    }
  });

  it('keeps delivering to the victim after its tokens have been renewed', async () => {
    // Renewed past half a token's life; once its first token has expired, its connections have authenticated again with later ones.
    await waitFor(
      'the victim past its first token',
      async () => (await metricValue(stack.get('node-agent').url, 'gantry_agent_kafka_tokens_obtained_total')) >= 3,
      {
        timeoutMs: 2 * TOKEN_TTL_MS,
        intervalMs: 500,
      },
    );
    const took = await cancelTakes(await runningJob(uniqueTag('after-renewal')));
    expect(took).toBeLessThan(15_000);
    expect((await victimGroup()).members).toHaveLength(1);
  });
});
