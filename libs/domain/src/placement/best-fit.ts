import { PlacementNode } from './schedulable';

/**
 * Best fit: the node left with the fewest free GPUs, then CPU cores, then memory, limits
 * fragmentation; node id breaks ties, so it is a total order. Allocation-free: it runs for every
 * node and job of a cycle.
 */
export function compareFit(a: PlacementNode, b: PlacementNode): number {
  const gpus = a.gpusTotal - a.gpusAllocated - (b.gpusTotal - b.gpusAllocated);
  if (gpus !== 0) return gpus;
  const cpu = a.cpuCores - a.cpuAllocated - (b.cpuCores - b.cpuAllocated);
  if (cpu !== 0) return cpu;
  const mem = a.memoryMiB - a.memoryAllocated - (b.memoryMiB - b.memoryAllocated);
  if (mem !== 0) return mem;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The first index whose element is not `before` (the array is partitioned: true, then false). */
export function lowerBound(a: readonly PlacementNode[], before: (n: PlacementNode) => boolean): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(a[mid])) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Puts `node` into `nodes`, kept in best-fit order (compareFit). */
export function insertByFit(nodes: PlacementNode[], node: PlacementNode): void {
  nodes.splice(
    lowerBound(nodes, (n) => compareFit(n, node) < 0),
    0,
    node,
  );
}
