/**
 * GPU devices: which of a node's GPU indices a rank holds. Counts decide whether a job fits
 * (resources.ts); this decides which devices it gets. A device is handed out only if the node
 * reports it healthy (`gpuIndices`) and no live attempt holds it (`gpusHeld`).
 */
export interface NodeDevices {
  gpusTotal: number;
  /** Indices of the node's healthy GPUs of its model; absent: 0 .. gpusTotal - 1 (a node described by counts only). */
  gpuIndices?: readonly number[];
  /** Indices held by live attempts on the node; absent: none. */
  gpusHeld?: readonly number[];
}

/** The indices a node may hand out at all, lowest first. */
export function usableGpuIndices(node: NodeDevices): number[] {
  if (node.gpuIndices === undefined) return Array.from({ length: node.gpusTotal }, (_, i) => i);
  return [...new Set(node.gpuIndices)].sort((a, b) => a - b);
}

/**
 * `count` device indices for one rank: usable and not held, lowest first (a job's devices stay
 * together at the low end and the high end stays free for the next). Null when fewer are free:
 * a node whose counts say it fits always has enough, because a held device counts as allocated and
 * an unhealthy one is neither usable nor in gpusTotal; null means the snapshot disagrees with itself.
 */
export function chooseGpuIndices(node: NodeDevices, count: number): number[] | null {
  if (count <= 0) return [];
  const held = new Set(node.gpusHeld ?? []);
  const chosen: number[] = [];
  for (const i of usableGpuIndices(node)) {
    if (held.has(i)) continue;
    chosen.push(i);
    if (chosen.length === count) return chosen;
  }
  return null;
}

/** The node's held devices after a rank takes `indices` (the planner's view within one plan). */
export function holdGpuIndices(node: NodeDevices, indices: readonly number[]): number[] {
  return [...(node.gpusHeld ?? []), ...indices];
}
