/**
 * kafkajs 2.2.4 (its last release) arms a timer in RequestQueue.scheduleCheckPendingRequests on
 * every call, also when no request waits and the connection is not throttled: `throttledUntil`
 * starts at -1, so the delay is negative, the timer fires after 1 ms, finds the queue empty and arms
 * the next. Every connection that has had one answer spins like that for good, so an idle service
 * burns CPU waking for nothing (ADR 0012 has the figure). Upstream:
 * tulios/kafkajs#1556 and #1704; the fix (PR #1667) was never released.
 *
 * Patched in place, like the encoder (kafkajs-pooled-encoder.ts): while a request waits, or the
 * connection is throttled, the method does what it did; otherwise it arms nothing. Nothing is lost:
 * a request that has to wait is queued by push(), which calls this method again, and every answer
 * calls checkPendingRequests().
 */
const REQUEST_QUEUE_MODULE = 'kafkajs/src/network/requestQueue';
const PATCHED = Symbol.for('gantry.kafkajs.idleRequestQueue');

interface RequestQueue {
  pending: unknown[];
  throttledUntil: number;
  scheduleCheckPendingRequests(): void;
}
interface RequestQueueClass {
  prototype: RequestQueue;
  [PATCHED]?: true;
}

const requestQueue = require(REQUEST_QUEUE_MODULE) as RequestQueueClass;
if (!requestQueue[PATCHED]) {
  requestQueue[PATCHED] = true;
  const scheduleAsShipped = requestQueue.prototype.scheduleCheckPendingRequests;
  requestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueue): void {
    if (this.pending.length === 0 && this.throttledUntil <= Date.now()) return;
    scheduleAsShipped.call(this);
  };
}
