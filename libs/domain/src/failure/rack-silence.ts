import { RackView } from './eviction-policy';

/**
 * Each rack's size and how many of its nodes are silent past the suspect timeout. Not the dead
 * one: nodes that stop together cross the dead timeout spread over a heartbeat period, and counting
 * only the dead would evict the first half of a partitioned rack before the rest made it a partition.
 */
export function rackSilence(
  nodes: ReadonlyArray<{ nodeId: string; rack: string }>,
  silenceMs: (nodeId: string) => number,
  suspectMs: number,
): Map<string, RackView> {
  const racks = new Map<string, RackView>();
  for (const n of nodes) {
    const r = racks.get(n.rack) ?? { rack: n.rack, total: 0, silent: 0 };
    r.total++;
    if (silenceMs(n.nodeId) >= suspectMs) r.silent++;
    racks.set(n.rack, r);
  }
  return racks;
}
