import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { TOPICS } from '@gantry/contracts';
import { ServiceProcess, Stack, waitFor } from '@gantry/stack';
import { HandAgent, TestStack, commandMessage, kafkaAs, metricValue, startTestStack, testKafka, testSuite, uniqueTag } from '@gantry/testing';
import { GatewayClient } from './gateway-client';

/**
 * The agent channel as a trust boundary (contract 4.1, 4.2; ADR 0015), tried from outside: a
 * stranger on the network, an enrolled node that lies, replays, a revoked node, forged commands,
 * and poison on every path. Each must change nothing, be counted, and leave the partition going.
 */
let e2e: TestStack;
let stack: Stack;
let admin: GatewayClient;
let hand: HandAgent;
let tag: string;
const extraAgents: ServiceProcess[] = [];

jest.setTimeout(180_000);

beforeAll(async () => {
  e2e = await startTestStack({ suite: 'agent-trust', simNodes: 2 });
  ({ stack, tag } = e2e);
  admin = new GatewayClient(stack.gatewayUrl, e2e.adminToken);
  hand = new HandAgent(stack.gatewayUrl, e2e.adminToken);
});

afterAll(async () => {
  await Promise.all(extraAgents.map((a) => a.stop()));
  await hand?.close();
  await stack?.stop();
});

const sim = (i: number) => `${tag}-${String(i).padStart(5, '0')}`;

const rejected = (url: string, topic: string, reason: string) => metricValue(url, `gantry_messages_rejected_total{topic="${topic}",reason="${reason}"}`);

function beat(nodeId: string, seq: number, over: Record<string, unknown> = {}) {
  return {
    nodeId,
    bootId: `${nodeId}-boot`,
    seq,
    sentAt: Date.now(),
    zone: 'zone-t',
    rack: 'rack-t',
    gpus: [{ index: 0, model: 'H100', memoryMiB: 81920, memoryUsedMiB: 0, utilization: 0.25, healthy: true }],
    cpu: { cores: 8, utilization: 0.5 },
    memory: { totalMiB: 65536, usedMiB: 1 },
    running: [],
    ...over,
  };
}

async function nodeView(id: string) {
  return waitFor(
    `node ${id}`,
    async () => {
      const r = await admin.request('GET', `/v1/nodes/${id}`);
      return r.status === 200 && r.body.telemetry ? r.body : undefined;
      // A deadline, not an expectation of speed: a fresh node waits for the ingester's next look at the
      // enrollments, and at a load average of 20 (full runs beside other checkouts) that took over 20 s.
    },
    { timeoutMs: 60_000 },
  );
}

async function longJob(): Promise<{ id: string; nodeId: string }> {
  const created = await admin.request('POST', '/v1/jobs', {
    name: 'long',
    image: 'none',
    command: ['sleep', '300'],
    labels: { suite: tag },
    resources: { gpus: 0, cpuCores: 1, memoryMiB: 64 },
  });
  expect(created.status).toBe(201);
  const running = await waitFor(
    'the job running',
    async () => {
      const r = await admin.request('GET', `/v1/jobs/${created.body.id}`);
      return r.body.state === 'RUNNING' ? r.body : undefined;
    },
    { timeoutMs: 30_000 },
  );
  return { id: running.id, nodeId: running.nodeIds[0] };
}

describe('the broker', () => {
  it('refuses a stranger: no credentials, wrong password; and an agent may not read beats or write anywhere else', async () => {
    const list = (security: Parameters<typeof kafkaAs>[1]) => kafkaAs(uniqueTag('stranger'), security).withAdmin((a) => a.listTopics());
    await expect(list(undefined)).rejects.toThrow(/Closed connection|Connection/);
    await expect(list({ sasl: { mechanism: 'scram-sha-512', username: 'gantry-fleet', password: 'guess' } })).rejects.toThrow(/authentication failed/i);

    const agent = testKafka(uniqueTag('agent'), 'fleet');
    const producer = await agent.connectProducer();
    try {
      await expect(producer.send(TOPICS.deadLetter, [{ key: 'x', value: '{}' }])).rejects.toThrow(/authoriz/i);
      await expect(producer.send(TOPICS.agentCommands, [{ key: sim(0), value: '{}' }])).rejects.toThrow(/authoriz/i);
      const reader = agent.rawConsumer({ groupId: `gantry-fleet-${uniqueTag()}` });
      await reader.connect();
      // Refused at subscribe (the topic's metadata) or when it fetches, whichever kafkajs reaches first.
      const crashed = new Promise<unknown>((resolve) => reader.on(reader.events.CRASH, (e) => resolve(e.payload.error)));
      const refused = await reader
        .subscribe({ topic: TOPICS.heartbeats, fromBeginning: false })
        .then(() => reader.run({ eachMessage: async () => undefined }))
        .then(
          () => crashed,
          (e: unknown) => e,
        );
      expect(String(refused)).toMatch(/authoriz/i);
      await reader.disconnect().catch(() => undefined);
    } finally {
      await agent.disconnect();
    }
  });
});

describe('node messages', () => {
  const ingester = () => stack.get('heartbeat-ingester').url;
  const reconciler = () => stack.get('reconciler').url;

  it('applies no report for a rank its node does not hold, nor an unsigned one, nor one signed by another node: each counted', async () => {
    const job = await longJob();
    const liar = `${tag}-liar`;
    await hand.enroll(liar);
    const before = {
      notAssigned: await rejected(reconciler(), TOPICS.jobReports, 'not-assigned'),
      unsigned: await rejected(reconciler(), TOPICS.jobReports, 'unsigned'),
      mismatch: await rejected(reconciler(), TOPICS.jobReports, 'node-mismatch'),
    };
    const report = (nodeId: string) => ({ nodeId, jobId: job.id, attempt: 1, state: 'SUCCEEDED', exitCode: 0, at: Date.now() });
    await hand.send(TOPICS.jobReports, [
      hand.message(liar, report(liar)), // its own name, another node's job
      hand.message(job.nodeId, report(job.nodeId), null), // the right node's name, unsigned
      { ...hand.message(liar, report(job.nodeId)), key: job.nodeId }, // the right node's name, signed by the liar
    ]);
    await waitFor(
      'all three refused',
      async () =>
        (await rejected(reconciler(), TOPICS.jobReports, 'not-assigned')) > before.notAssigned &&
        (await rejected(reconciler(), TOPICS.jobReports, 'unsigned')) > before.unsigned &&
        (await rejected(reconciler(), TOPICS.jobReports, 'node-mismatch')) > before.mismatch,
      { timeoutMs: 20_000 },
    );
    expect((await admin.request('GET', `/v1/jobs/${job.id}`)).body).toMatchObject({ state: 'RUNNING', attempt: 1 });
    await admin.request('POST', `/v1/jobs/${job.id}/cancel`);
  });

  it('refuses a replayed beat and one dated in the future: the node shows what it really sent, and still answers', async () => {
    const node = `${tag}-honest`;
    await hand.enroll(node);
    const first = hand.message(node, beat(node, 1));
    await hand.sendBeats([first]);
    const seen = await nodeView(node);
    expect(seen.telemetry.cpu.utilization).toBe(0.5);
    const before = { replayed: await rejected(ingester(), TOPICS.heartbeats, 'replayed'), skew: await rejected(ingester(), TOPICS.heartbeats, 'clock-skew') };

    // The same signed beat again, and one with a lower seq: replays, whatever their content.
    await hand.sendBeats([first, hand.message(node, beat(node, 0, { cpu: { cores: 8, utilization: 0.9 } }))]);
    // A new boot dated ten minutes ahead: would make every real beat look old, if clocks decided.
    await hand.sendBeats([hand.message(node, beat(node, 1, { bootId: 'future', sentAt: Date.now() + 600_000, cpu: { cores: 8, utilization: 0.99 } }))]);
    await waitFor(
      'both refused',
      async () =>
        (await rejected(ingester(), TOPICS.heartbeats, 'replayed')) >= before.replayed + 2 &&
        (await rejected(ingester(), TOPICS.heartbeats, 'clock-skew')) > before.skew,
      { timeoutMs: 20_000 },
    );
    const after = (await admin.request('GET', `/v1/nodes/${node}`)).body;
    expect(after.telemetry).toMatchObject({ cpu: { cores: 8, utilization: 0.5 }, sentAt: seen.telemetry.sentAt });

    // Its next real beat is taken, in receive order.
    await hand.sendBeats([hand.message(node, beat(node, 2, { cpu: { cores: 8, utilization: 0.3 } }))]);
    await waitFor('the next real beat', async () => (await admin.request('GET', `/v1/nodes/${node}`)).body.telemetry.cpu.utilization === 0.3, {
      timeoutMs: 20_000,
    });
  });

  it('after a revocation, nothing the node sends changes anything; enrolled again it speaks with its new credential only', async () => {
    const node = `${tag}-revoked`;
    await hand.enroll(node);
    await hand.sendBeats([hand.message(node, beat(node, 1))]);
    await nodeView(node);
    expect((await admin.request('DELETE', `/v1/nodes/${node}/enrollment`)).status).toBe(204);
    const before = await rejected(ingester(), TOPICS.heartbeats, 'revoked');
    // Revocation reaches the ingester within its refresh (ADR 0015: about a quarter second): from
    // the first beat it refuses as revoked, it refuses every later one.
    let seq = 2;
    await waitFor(
      'a beat refused as revoked',
      async () => {
        await hand.sendBeats([hand.message(node, beat(node, seq++))]);
        return (await rejected(ingester(), TOPICS.heartbeats, 'revoked')) > before;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    const frozen = (await admin.request('GET', `/v1/nodes/${node}`)).body.telemetry;
    const refusedSoFar = await rejected(ingester(), TOPICS.heartbeats, 'revoked');
    await hand.sendBeats([hand.message(node, beat(node, seq++, { cpu: { cores: 8, utilization: 0.77 } }))]);
    await waitFor('refused again', async () => (await rejected(ingester(), TOPICS.heartbeats, 'revoked')) > refusedSoFar, { timeoutMs: 20_000 });
    expect((await admin.request('GET', `/v1/nodes/${node}`)).body.telemetry).toEqual(frozen);

    // Enrolled again: the old credential stays refused, the new one is taken.
    const oldCredential = hand.credentials.get(node)!;
    await hand.enroll(node);
    expect(hand.credentials.get(node)).not.toBe(oldCredential);
    await hand.sendBeats([hand.message(node, beat(node, seq++, { cpu: { cores: 8, utilization: 0.11 } }))]);
    await waitFor('the new credential works', async () => (await admin.request('GET', `/v1/nodes/${node}`)).body.telemetry.cpu.utilization === 0.11, {
      timeoutMs: 20_000,
    });
  });

  it('parks a signed beat the database would refuse (a NUL in its zone) and goes on with the partition', async () => {
    const [bad, good] = [`${tag}-nul`, `${tag}-after-nul`];
    await hand.enroll(bad, good);
    const before = await metricValue(ingester(), `gantry_messages_dead_lettered_total{topic="${TOPICS.heartbeats}"}`);
    await hand.sendBeats([hand.message(bad, beat(bad, 1, { zone: 'zone\u0000x' })), hand.message(good, beat(good, 1))]);
    await nodeView(good);
    await waitFor(
      'the bad one parked',
      async () => (await metricValue(ingester(), `gantry_messages_dead_lettered_total{topic="${TOPICS.heartbeats}"}`)) > before,
      { timeoutMs: 30_000 },
    );
    expect((await admin.request('GET', `/v1/nodes/${bad}`)).status).toBe(404);
    const ready = await fetch(`${ingester()}/readyz`);
    expect(ready.status).toBe(200);
  });
});

describe('commands', () => {
  const agentUrl = () => stack.get('node-agent').url;

  /** A RUN for sim node 0 that leaves a marker file if it runs. */
  function run(marker: string, issuedAt = Date.now(), command = ['touch', marker]) {
    return {
      type: 'RUN',
      nodeId: sim(0),
      jobId: randomUUID(),
      attempt: 1,
      issuedAt,
      image: 'none',
      command,
      env: {},
      resources: { gpus: 0, cpuCores: 1, memoryMiB: 1 },
      gang: { size: 1, rank: 0, nodeIds: [sim(0)] },
    };
  }

  it('carries out only what the control plane signed, recently: forged, unsigned and old commands change nothing and are counted', async () => {
    const real = stack.secrets.commandSigningKey;
    const forger = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    // Whoever reaches the command topic (here with the gateway's principal) still cannot sign.
    const writer = testKafka(uniqueTag('writer'), 'gateway');
    const producer = await writer.connectProducer();
    const m = commandMessage;
    const marks = ['forged', 'unsigned', 'old', 'genuine'].map((k) => join(e2e.work, `${k}-${uniqueTag()}`));
    const topic = TOPICS.agentCommands;
    const before = {
      bad: await rejected(agentUrl(), topic, 'bad-signature'),
      unsigned: await rejected(agentUrl(), topic, 'unsigned'),
      expired: await rejected(agentUrl(), topic, 'expired'),
    };
    try {
      await producer.send(topic, [
        m(run(marks[0]), forger),
        m(run(marks[1]), null),
        m(run(marks[2], Date.now() - 3_600_000), real),
        // The control: signed with the real key and recent, the same command does run.
        m(run(marks[3]), real),
      ]);
      await waitFor('the genuine command ran', () => existsSync(marks[3]), { timeoutMs: 20_000 });
      await waitFor(
        'the others refused',
        async () =>
          (await rejected(agentUrl(), topic, 'bad-signature')) > before.bad &&
          (await rejected(agentUrl(), topic, 'unsigned')) > before.unsigned &&
          (await rejected(agentUrl(), topic, 'expired')) > before.expired,
        { timeoutMs: 20_000 },
      );
      expect(marks.slice(0, 3).map(existsSync)).toEqual([false, false, false]);

      // A signed RUN the agent cannot even spawn (a NUL in its argument) fails that attempt once;
      // the commands behind it are carried out.
      const after = join(e2e.work, `after-${uniqueTag()}`);
      await producer.send(topic, [m(run('x', Date.now(), ['touch', 'bad\u0000name']), real), m(run(after), real)]);
      await waitFor('the command after the unspawnable one ran', () => existsSync(after), { timeoutMs: 20_000 });
    } finally {
      await writer.disconnect();
    }
  });

  it('is read only by the agents whose nodes share its partition, not by every agent', async () => {
    // Four more agent processes of two nodes each, beside the stack's own.
    const { basePort } = testSuite('agent-trust');
    for (let i = 0; i < 4; i++) {
      const prefix = `${tag}-a${i}`;
      const agent = new ServiceProcess({
        name: `agent-${i}`,
        service: 'node-agent',
        port: basePort + 10 + i,
        root: e2e.root,
        logDir: join(e2e.root, '.cache', 'test-logs', tag),
        env: stack.envFor('node-agent', {
          GANTRY_SIM_NODES: '2',
          GANTRY_SIM_PREFIX: prefix,
          GANTRY_AGENT_ID: prefix,
          GANTRY_SIM_EXECUTOR: 'sleep',
          GANTRY_AGENT_WORKDIR: join(e2e.work, prefix),
        }),
      });
      extraAgents.push(agent);
      agent.start();
    }
    await Promise.all(extraAgents.map((a) => a.ready(60_000)));
    const agents = [stack.get('node-agent'), ...extraAgents];
    const reads = async () => {
      let mine = 0;
      let all = 0;
      for (const a of agents) {
        const m = await metricValue(a.url, 'gantry_agent_commands_read_total{mine="true"}');
        mine += m;
        all += m + (await metricValue(a.url, 'gantry_agent_commands_read_total{mine="false"}'));
      }
      return { mine, all };
    };
    const start = await reads();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      // More memory than the hand-made nodes of the tests above have: only the agents' nodes fit.
      const r = await admin.request('POST', '/v1/jobs', {
        name: 'spread',
        image: 'none',
        command: ['true'],
        env: { SIM_DURATION_MS: '10' },
        labels: { suite: tag },
        resources: { gpus: 0, cpuCores: 1, memoryMiB: 100_000 },
      });
      ids.push(r.body.id);
    }
    await waitFor(
      'every job done',
      async () => {
        for (const id of ids) if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes((await admin.request('GET', `/v1/jobs/${id}`)).body.state)) return false;
        return true;
      },
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const end = await reads();
    const commands = end.mine - start.mine; // each command is for exactly one agent's node
    const perCommand = (end.all - start.all) / commands;
    console.log(`commands for the 10 nodes of 5 agents: ${commands}; agents that read each: ${perCommand.toFixed(2)} on average (every agent would be 5)`);
    expect(commands).toBeGreaterThanOrEqual(40);
    // Ten nodes over 64 partitions: a few share one; far from every agent reading everything.
    expect(perCommand).toBeLessThan(2);
  });
});
