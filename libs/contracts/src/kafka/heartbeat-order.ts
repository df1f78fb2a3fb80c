import { HeartbeatMessage } from './heartbeat.message';

/** Newer beat of the same node: same boot and higher seq, or a different boot sent later. */
export function isNewerBeat(a: HeartbeatMessage, b: HeartbeatMessage): boolean {
  return a.bootId === b.bootId ? a.seq > b.seq : a.sentAt > b.sentAt;
}

/** The newest beat of each node in a batch: every consumer of heartbeats judges order the same way. */
export function newestBeatPerNode<B extends HeartbeatMessage>(beats: B[]): Map<string, B> {
  const newest = new Map<string, B>();
  for (const b of beats) {
    const cur = newest.get(b.nodeId);
    if (!cur || isNewerBeat(b, cur)) newest.set(b.nodeId, b);
  }
  return newest;
}
