import { AddressInfo } from 'node:net';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { GantryApiError, GantryClient, RetryBudget } from '@gantry/client';

/** A real HTTP server on loopback that answers from a script, recording what it was sent. */
async function scriptedServer(answers: Array<{ status: number; body?: object; headers?: Record<string, string> } | 'hang-up'>) {
  const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      const next = answers.shift() ?? { status: 500 };
      if (next === 'hang-up') return req.socket.destroy();
      res.writeHead(next.status, { 'content-type': 'application/json', ...(next.headers ?? {}) });
      res.end(JSON.stringify(next.body ?? {}));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise((r) => server.close(r)) };
}

const noSleep = async () => undefined;

describe('GantryClient against a real server', () => {
  it('retries 503, 429 and a dropped connection, with one Idempotency-Key for the whole create', async () => {
    const s = await scriptedServer([{ status: 503 }, 'hang-up', { status: 429, headers: { 'retry-after': '0' } }, { status: 201, body: { id: 'job-1' } }]);
    try {
      const client = new GantryClient({ baseUrl: s.url, token: 't', sleep: noSleep });
      const { job, replayed } = await client.createJob({ name: 'x', image: 'i', command: ['true'] });
      expect(job).toEqual({ id: 'job-1' });
      expect(replayed).toBe(false);
      const keys = s.seen.map((r) => r.headers['idempotency-key']);
      expect(keys).toHaveLength(4);
      expect(new Set(keys).size).toBe(1);
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(s.seen.every((r) => r.headers.authorization === 'Bearer t')).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('does not retry a final answer and surfaces its problem details', async () => {
    const s = await scriptedServer([{ status: 422, body: { title: 'Unprocessable request', detail: 'queue nope does not exist' } }]);
    try {
      const client = new GantryClient({ baseUrl: s.url, token: 't', sleep: noSleep });
      await expect(client.createJob({ name: 'x', image: 'i', command: ['true'], queue: 'nope' })).rejects.toMatchObject({
        status: 422,
        problem: { detail: 'queue nope does not exist' },
      });
      expect(s.seen).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it('stops retrying when the retry budget is spent', async () => {
    const s = await scriptedServer(Array.from({ length: 10 }, () => ({ status: 503 })));
    try {
      const client = new GantryClient({
        baseUrl: s.url,
        token: 't',
        sleep: noSleep,
        budget: new RetryBudget(0.1, 2),
        retry: { maxRetries: 8, baseDelayMs: 1, maxDelayMs: 1 },
      });
      await expect(client.getJob('a')).rejects.toBeInstanceOf(GantryApiError);
      expect(s.seen).toHaveLength(3); // the call and the two retries the budget allowed
    } finally {
      await s.close();
    }
  });

  it('waits with growing, jittered delays', async () => {
    const s = await scriptedServer([{ status: 500 }, { status: 500 }, { status: 500 }, { status: 200, body: { id: 'j' } }]);
    const waits: number[] = [];
    try {
      const client = new GantryClient({
        baseUrl: s.url,
        token: 't',
        random: () => 0.5,
        sleep: async (ms) => void waits.push(ms),
        retry: { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 10_000 },
      });
      await client.getJob('j');
      expect(waits).toEqual([50, 100, 200]);
    } finally {
      await s.close();
    }
  });
});
