interface Queue {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
  maybeThrottle(ms: number | null): void;
  destroy(): void;
}
type QueueClass = new (o: object) => Queue;

/** kafkajs's RequestQueue in a registry of its own: as shipped, or with the patch loaded after it. */
function requestQueueClass(patched: boolean): QueueClass {
  let cls: QueueClass | undefined;
  jest.isolateModules(() => {
    cls = require('kafkajs/src/network/requestQueue') as QueueClass;
    if (patched) require('./kafkajs-idle-request-queue');
  });
  return cls!;
}

const logger = { debug: () => undefined, warn: () => undefined, error: () => undefined, info: () => undefined };
const newQueue = (cls: QueueClass) =>
  new cls({ maxInFlightRequests: null, requestTimeout: 30_000, enforceRequestTimeout: false, clientId: 't', broker: 'b:9092', logger });

describe('kafkajs RequestQueue when idle', () => {
  const queues: Queue[] = [];
  afterEach(() => {
    for (const q of queues.splice(0)) if (q.throttleCheckTimeoutId) clearTimeout(q.throttleCheckTimeoutId);
  });
  const track = (q: Queue) => (queues.push(q), q);

  it('as shipped, an empty, unthrottled queue arms a timer on every check (the bug this patches)', () => {
    const q = track(newQueue(requestQueueClass(false)));
    q.checkPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
  });

  it('patched, an empty, unthrottled queue arms nothing', () => {
    const q = track(newQueue(requestQueueClass(true)));
    q.checkPendingRequests();
    q.scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).toBeNull();
  });

  it('patched, a waiting request still gets its check', () => {
    const q = track(newQueue(requestQueueClass(true)));
    q.pending.push({});
    q.scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
  });

  it('patched, a throttled connection still gets a check when the throttle ends', () => {
    const q = track(newQueue(requestQueueClass(true)));
    q.maybeThrottle(200);
    q.scheduleCheckPendingRequests();
    expect(q.throttleCheckTimeoutId).not.toBeNull();
  });

  it('patched, the loop stops: a timer that fires on an idle queue arms no next one', () => {
    jest.useFakeTimers();
    try {
      const q = track(newQueue(requestQueueClass(true)));
      q.pending.push({});
      q.scheduleCheckPendingRequests();
      q.pending.length = 0; // sent meanwhile (an answer's checkPendingRequests)
      jest.advanceTimersByTime(10);
      expect(q.throttleCheckTimeoutId).toBeNull();
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});
