import type Redis from 'ioredis';
import { NodeLiveStore } from './node-live-store';

/**
 * How long a node's live state outlives its last beat, in dead timeouts. Past the dead timeout the
 * node gets no work, but its last beat still answers GET /v1/nodes and the utilisation sweep still
 * needs its contribution, so the hash expires only well after it (ADR 0006).
 */
export const LIVE_STATE_DEAD_TIMEOUTS = 3;

/** The live store every service opens: its keys expire LIVE_STATE_DEAD_TIMEOUTS x GANTRY_NODE_DEAD_MS after the last beat. */
export function nodeLiveStoreFor(redis: Redis, nodeDeadMs: number): NodeLiveStore {
  return new NodeLiveStore(redis, LIVE_STATE_DEAD_TIMEOUTS * nodeDeadMs);
}
