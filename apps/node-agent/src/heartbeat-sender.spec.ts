import { createHmac } from 'node:crypto';
import { MessageProducer, NODE_ID_HEADER, SIGNATURE_HEADER } from '@gantry/messaging';
import { HeartbeatSender, MAX_BEATS_PER_SEND, MAX_CATCH_UP_SLOTS, MAX_SENDS_IN_FLIGHT, MIN_SLOTS } from './heartbeat-sender';
import { NodeRuntime } from './node-runtime';
import { NodeKeys } from './identity/node-keys';

/** `ack`, where given, is awaited by every send: a broker that answers when the test says so. */
function fleet(n: number, periodMs = 1000, ack?: () => Promise<void>) {
  const sent = new Map<string, number>();
  const sends: number[] = [];
  const nodes = Array.from({ length: n }, (_, i) => ({ heartbeat: async () => ({ nodeId: `n${i}` }), stopAll: () => undefined }) as unknown as NodeRuntime);
  const signed: Array<{ value: string; headers: Record<string, string> }> = [];
  const producer = {
    send: async (_topic: string, messages: Array<{ key: string; value: string; headers: Record<string, string> }>) => {
      sends.push(messages.length);
      for (const m of messages) sent.set(m.key, (sent.get(m.key) ?? 0) + 1);
      signed.push(...messages.slice(0, 1));
      await ack?.();
    },
  } as unknown as MessageProducer;
  const keys = new NodeKeys();
  for (let i = 0; i < n; i++) keys.set(`n${i}`, `credential-${i}`);
  const sender = new HeartbeatSender(producer, nodes, { periodMs, fenceMs: 60_000, keys, logger: { warn: () => undefined } });
  return { sender, sent, sends, signed };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('HeartbeatSender', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('signs every beat as its node: gantry-node-id, and v1= HMAC-SHA256 of the value with the credential (contract 4.1)', async () => {
    const { sender, signed } = fleet(3);
    await sender.start();
    sender.stop();
    const [m] = signed;
    const nodeId = m.headers[NODE_ID_HEADER];
    const credential = `credential-${nodeId.slice(1)}`;
    expect(m.headers[SIGNATURE_HEADER]).toBe(`v1=${createHmac('sha256', Buffer.from(credential, 'utf8')).update(m.value).digest('hex')}`);
  });

  it('beats every node once per period, spread over ten slots of a tenth of the fleet each', async () => {
    const { sender, sent, sends } = fleet(100);
    await sender.start();
    sent.clear();
    sends.length = 0;
    for (let t = 0; t < 50; t++) {
      jest.advanceTimersByTime(100);
      await flush();
    }
    sender.stop();
    expect(Math.max(...sends)).toBe(10 * 1); // one slot per tick
    const counts = [...sent.values()];
    expect(sent.size).toBe(100);
    expect(Math.min(...counts)).toBeGreaterThanOrEqual(5);
    expect(Math.max(...counts)).toBeLessThanOrEqual(6);
  });

  it('catches up with the clock when a tick comes late, without sending a node twice at once', async () => {
    const { sender, sends } = fleet(100);
    await sender.start();
    jest.advanceTimersByTime(100);
    await flush();
    sends.length = 0;
    jest.setSystemTime(Date.now() + 400); // the event loop was busy for 400 ms
    jest.advanceTimersByTime(100);
    await flush();
    expect(sends).toEqual([50]); // the five slots due by now, in one send
    jest.setSystemTime(Date.now() + 5000); // far behind: the rest is skipped, not sent in one burst
    sends.length = 0;
    jest.advanceTimersByTime(100);
    await flush();
    sender.stop();
    expect(sends).toEqual([MAX_CATCH_UP_SLOTS * 10]);
  });

  it('splits the start-up burst and a catch-up into sends of at most MAX_BEATS_PER_SEND beats', async () => {
    const { sender, sends } = fleet(5000);
    await sender.start();
    expect(sends).toEqual([1000, 1000, 1000, 1000, 1000]);
    sends.length = 0;
    jest.setSystemTime(Date.now() + 5000);
    jest.advanceTimersByTime(100);
    await flush();
    sender.stop();
    expect(Math.max(...sends)).toBeLessThanOrEqual(MAX_BEATS_PER_SEND);
    expect(sends.reduce((a, b) => a + b, 0)).toBe(MAX_CATCH_UP_SLOTS * 500);
  });

  it('holds due slots while MAX_SENDS_IN_FLIGHT sends are unacknowledged, sends them once acks come, and skips what fell too far behind', async () => {
    let release: () => void = () => undefined;
    let gate = new Promise<void>((r) => (release = r));
    const { sender, sends } = fleet(100, 1000, () => gate);
    const started = sender.start(); // its first burst waits on the gate too
    release();
    await started;
    gate = new Promise<void>((r) => (release = r));
    sends.length = 0;
    for (let t = 0; t < MAX_SENDS_IN_FLIGHT + MAX_CATCH_UP_SLOTS + 2; t++) {
      jest.advanceTimersByTime(100);
      await flush();
    }
    // One send per tick until the bound, then nothing while none is acknowledged.
    expect(sends).toEqual(Array.from({ length: MAX_SENDS_IN_FLIGHT }, () => 10));
    sends.length = 0;
    release();
    await flush();
    jest.advanceTimersByTime(100);
    await flush();
    // Acknowledged: the slots that waited (no more than MAX_CATCH_UP_SLOTS), in one send.
    expect(sends).toEqual([MAX_CATCH_UP_SLOTS * 10]);
    sender.stop();
  });

  it.each([
    ['the e2e fleet, 1 s', 100, 1000, 10],
    ['a big fleet, 1 s', 5000, 1000, 10],
    ['the bench fleet, 5 s: fewer, fuller slots', 200, 5000, 10],
    ['a mid fleet, 5 s', 600, 5000, 30],
    ['50,000 nodes, 5 s: 100 ms slots', 50_000, 5000, 50],
    ['one real node, 5 s', 1, 5000, MIN_SLOTS],
    ['a period shorter than 100 ms', 200, 50, 1],
    ['a period of 500 ms', 3, 500, 5],
  ])('slot count for %s', (_n, fleetSize, periodMs, slots) => {
    expect(HeartbeatSender.slotCount(fleetSize, periodMs)).toBe(slots);
  });

  it('sends a small fleet in slots of about TARGET_BEATS_PER_SLOT, still once per period per node', async () => {
    const { sender, sent, sends } = fleet(200, 5000);
    await sender.start();
    sent.clear();
    sends.length = 0;
    for (let t = 0; t < 100; t++) {
      jest.advanceTimersByTime(100);
      await flush();
    }
    sender.stop();
    expect(sends).toEqual(Array.from({ length: 20 }, () => 20)); // 10 s: two periods of ten slots, 500 ms apart
    expect(new Set(sent.values())).toEqual(new Set([2]));
    expect(sent.size).toBe(200);
  });
});
