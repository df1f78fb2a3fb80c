import { ResourceRequest } from '../resources/resources';
import { lowerBound } from './best-fit';
import { PlacementNode, schedulable } from './schedulable';

/**
 * Schedulable nodes bucketed by GPU model and free GPUs, each bucket sorted by free CPU cores,
 * then free memory, then id: the best fit (fewest free GPUs, then cores, then memory, then id)
 * is the first fitting node of the lowest bucket that has one, found without a pass over the
 * fleet. A scan of 50,000 nodes per one-node job was most of a scheduling cycle. The answers are
 * exactly those of the scan: same filters, same order.
 */
export class FitIndex {
  /** model (null for none) -> free GPUs -> nodes in (free cores, free memory, id) order. */
  private readonly buckets = new Map<string | null, PlacementNode[][]>();

  constructor(nodes: Iterable<PlacementNode>) {
    for (const n of nodes) if (indexable(n)) this.bucketOf(n).push(n);
    for (const levels of this.buckets.values()) for (const b of levels) b?.sort(compareWithinBucket);
  }

  /** The best-fitting schedulable node not in `excluded` that fits `req` now, or null. */
  best(req: ResourceRequest, excluded: ReadonlySet<string>): PlacementNode | null {
    // gpus 0 fits any model, like fitsNow.
    const models = req.gpus === 0 || req.gpuModel === null ? [...this.buckets.keys()] : [req.gpuModel];
    let top = 0;
    for (const m of models) top = Math.max(top, (this.buckets.get(m)?.length ?? 0) - 1);
    for (let free = req.gpus; free <= top; free++) {
      let best: PlacementNode | null = null;
      for (const m of models) {
        const bucket = this.buckets.get(m)?.[free];
        if (!bucket || bucket.length === 0) continue;
        const found = firstFitting(bucket, req, excluded);
        if (found && (best === null || compareWithinBucket(found, best) < 0)) best = found;
      }
      if (best) return best;
    }
    return null;
  }

  /** Every schedulable node not in `excluded` that fits `req` now (for gangs), in no particular order. */
  fitting(req: ResourceRequest, excluded: ReadonlySet<string>): PlacementNode[] {
    const out: PlacementNode[] = [];
    const models = req.gpus === 0 || req.gpuModel === null ? [...this.buckets.keys()] : [req.gpuModel];
    for (const m of models) {
      const levels = this.buckets.get(m) ?? [];
      for (let free = req.gpus; free < levels.length; free++) {
        const bucket = levels[free];
        for (let i = lowerBound(bucket, (n) => n.cpuCores - n.cpuAllocated < req.cpuCores); i < bucket.length; i++) {
          const n = bucket[i];
          if (n.memoryMiB - n.memoryAllocated >= req.memoryMiB && !excluded.has(n.id)) out.push(n);
        }
      }
    }
    return out;
  }

  /**
   * Replaces a node with its new state: an allocation in a plan, or a change the snapshot read
   * (`before` null: a node not indexed yet; `after` null: one to drop). `before` must be the object
   * that was indexed: it is found by its values.
   */
  replace(before: PlacementNode | null, after: PlacementNode | null): void {
    if (before && indexable(before)) {
      const bucket = this.bucketOf(before);
      const i = lowerBound(bucket, (n) => compareWithinBucket(n, before) < 0);
      if (bucket[i]?.id === before.id) bucket.splice(i, 1);
    }
    if (after && indexable(after)) {
      const bucket = this.bucketOf(after);
      bucket.splice(
        lowerBound(bucket, (n) => compareWithinBucket(n, after) < 0),
        0,
        after,
      );
    }
  }

  private bucketOf(n: PlacementNode): PlacementNode[] {
    let levels = this.buckets.get(n.gpuModel);
    if (!levels) this.buckets.set(n.gpuModel, (levels = []));
    const free = n.gpusTotal - n.gpusAllocated;
    while (levels.length <= free) levels.push([]);
    return levels[free];
  }
}

/** A node with negative free GPUs fits nothing (fitsNow needs free >= requested >= 0). */
function indexable(n: PlacementNode): boolean {
  return schedulable(n) && n.gpusTotal - n.gpusAllocated >= 0;
}

function compareWithinBucket(a: PlacementNode, b: PlacementNode): number {
  const cpu = a.cpuCores - a.cpuAllocated - (b.cpuCores - b.cpuAllocated);
  if (cpu !== 0) return cpu;
  const mem = a.memoryMiB - a.memoryAllocated - (b.memoryMiB - b.memoryAllocated);
  if (mem !== 0) return mem;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The first node (in bucket order) with enough free cores and memory that is not excluded. */
function firstFitting(bucket: PlacementNode[], req: ResourceRequest, excluded: ReadonlySet<string>): PlacementNode | null {
  for (let i = lowerBound(bucket, (n) => n.cpuCores - n.cpuAllocated < req.cpuCores); i < bucket.length; i++) {
    const n = bucket[i];
    if (n.memoryMiB - n.memoryAllocated >= req.memoryMiB && !excluded.has(n.id)) return n;
  }
  return null;
}
