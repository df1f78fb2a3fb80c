import { KafkaTokenSource } from './kafka-token-source';

const T0 = 1_800_000_000_000;
const TTL = 600_000;

/** A gateway stand-in: answers each token request as `answers` says, in order (the last one repeats). */
function gateway(answers: Array<number | 'down'>) {
  const asked: Array<{ url: string; signature: string; at: number }> = [];
  let n = 0;
  jest.spyOn(global, 'fetch').mockImplementation(async (url, init) => {
    const answer = answers[Math.min(n++, answers.length - 1)];
    const at = JSON.parse(String(init!.body)).at as number;
    asked.push({ url: String(url), signature: (init!.headers as Record<string, string>)['gantry-signature'], at });
    if (answer === 'down') throw new Error('connect ECONNREFUSED');
    if (answer !== 200) return new Response('{"title":"refused"}', { status: answer });
    return new Response(
      JSON.stringify({
        token: `token-${asked.length}`,
        expiresAt: new Date(at + TTL).toISOString(),
        principal: 'gantry-node-gpu-1.g2',
        groupId: 'gantry-node-gpu-1',
      }),
      { status: 200 },
    );
  });
  return asked;
}

function source(now: { t: number }) {
  return new KafkaTokenSource({
    gatewayUrl: 'http://gw:8080/',
    nodeId: 'gpu-1',
    credential: async () => 'credential-of-gpu-1',
    logger: { warn: () => undefined, info: () => undefined },
    now: () => now.t,
    deadlineMs: 0,
  });
}

afterEach(() => jest.restoreAllMocks());

describe('KafkaTokenSource', () => {
  it('asks once, signed for its node, and holds the token while it is fresh', async () => {
    const asked = gateway([200]);
    const now = { t: T0 };
    const s = source(now);
    expect(await Promise.all([s.token(), s.token(), s.token()])).toEqual(['token-1', 'token-1', 'token-1']);
    now.t = T0 + TTL / 2 - 1;
    expect(await s.token()).toBe('token-1');
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ url: 'http://gw:8080/v1/nodes/gpu-1/kafka-token', at: T0, signature: expect.stringMatching(/^v1=[0-9a-f]{64}$/) });
    expect(s.principal).toBe('gantry-node-gpu-1.g2');
  });

  it.each<[string, Array<number | 'down'>, number, string]>([
    ['renews past half its life', [200, 200], T0 + TTL / 2, 'token-2'],
    ['keeps the held token while the gateway is away', [200, 'down'], T0 + TTL / 2, 'token-1'],
    ['keeps the held token while the gateway refuses', [200, 503], T0 + TTL - 1, 'token-1'],
  ])('%s', async (_n, answers, later, expected) => {
    gateway(answers);
    const now = { t: T0 };
    const s = source(now);
    await s.token();
    now.t = later;
    expect(await s.token()).toBe(expected);
  });

  it('hands out no expired token: a refusal then reaches kafkajs', async () => {
    gateway([200, 401]);
    const now = { t: T0 };
    const s = source(now);
    await s.token();
    now.t = T0 + TTL;
    await expect(s.token()).rejects.toThrow(/refused a Kafka token for node gpu-1: 401/);
  });
});
