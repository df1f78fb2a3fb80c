import { MessageProducer } from './kafka-client';
import { WakeUpSender } from './wake-up-sender';

/** A producer whose sends stay in flight until the test lets them go. */
function heldProducer() {
  const sent: Array<{ topic: string; type: string }> = [];
  const waiting: Array<{ ok: () => void; fail: (e: Error) => void }> = [];
  const producer: MessageProducer = {
    send: (topic, messages) =>
      new Promise<void>((ok, fail) => {
        for (const m of messages) sent.push({ topic, type: JSON.parse(String(m.value)).type });
        waiting.push({ ok, fail });
      }),
    sendBatch: async () => undefined,
  };
  const flush = async () => {
    await Promise.resolve();
    waiting.shift()?.ok();
    await new Promise((r) => setImmediate(r));
  };
  return { producer, sent, waiting, flush };
}

describe('WakeUpSender', () => {
  it('sends at once, then coalesces what is signalled while a send is in flight into one more', async () => {
    const p = heldProducer();
    const w = new WakeUpSender(p.producer, { debug: () => undefined }, 0);
    w.signal('JOB_CREATED');
    w.signal('JOB_CREATED');
    w.signal('JOB_CREATED');
    expect(p.sent).toHaveLength(1);
    await p.flush();
    expect(p.sent).toHaveLength(2);
    await p.flush();
    await w.settled();
    expect(p.sent.map((s) => s.topic)).toEqual(['gantry.internal.job-lifecycle.v1', 'gantry.internal.job-lifecycle.v1']);
    expect([w.signalled, w.delivered]).toEqual([3, 2]);
  });

  it('keeps the strongest kind signalled meanwhile: freed capacity is never hidden behind a create', async () => {
    const p = heldProducer();
    const w = new WakeUpSender(p.producer, { debug: () => undefined }, 0);
    w.signal('JOB_CREATED');
    w.signal('CAPACITY_RELEASED');
    w.signal('JOB_CREATED');
    await p.flush();
    await p.flush();
    await w.settled();
    expect(p.sent.map((s) => s.type)).toEqual(['JOB_CREATED', 'CAPACITY_RELEASED']);
  });

  it('a failed send is logged and dropped; the next signal sends again', async () => {
    const p = heldProducer();
    const logged: string[] = [];
    const w = new WakeUpSender(p.producer, { debug: (_o, m) => logged.push(m) }, 0);
    w.signal('CAPACITY_RELEASED');
    await Promise.resolve();
    p.waiting.shift()!.fail(new Error('broker away'));
    await w.settled();
    expect(logged).toHaveLength(1);
    w.signal('JOB_CREATED');
    await p.flush();
    await w.settled();
    expect(p.sent.map((s) => s.type)).toEqual(['CAPACITY_RELEASED', 'JOB_CREATED']);
    expect(w.delivered).toBe(1);
  });

  it('sends a lone signal at once, and the next no sooner than the gap after the last send began', async () => {
    jest.useFakeTimers({ now: 1_000_000, doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const p = heldProducer();
      const w = new WakeUpSender(p.producer, { debug: () => undefined }, 20);
      w.signal('JOB_CREATED');
      expect(p.sent).toHaveLength(1);
      await p.flush();
      w.signal('JOB_CREATED');
      w.signal('JOB_CREATED');
      await jest.advanceTimersByTimeAsync(19);
      expect(p.sent).toHaveLength(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(p.sent).toHaveLength(2);
      await p.flush();
      // After a quiet spell longer than the gap, a signal goes at once again.
      await jest.advanceTimersByTimeAsync(50);
      w.signal('CAPACITY_RELEASED');
      expect(p.sent.map((s) => s.type)).toEqual(['JOB_CREATED', 'JOB_CREATED', 'CAPACITY_RELEASED']);
      await p.flush();
      await w.settled();
      expect([w.signalled, w.delivered]).toEqual([4, 3]);
    } finally {
      jest.useRealTimers();
    }
  });
});
