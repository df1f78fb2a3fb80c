import { ResourceRequest, fitsNow } from '../resources/resources';
import { compareFit, insertByFit } from './best-fit';
import { FitIndex } from './fit-index';
import { PlacementNode, schedulable } from './schedulable';

/**
 * The nodes a gang could use, grouped by rack, for each request shape seen, kept current as nodes
 * change: a gang then looks at racks, not at every fitting node (tens of thousands of them on a
 * large fleet; ADR 0012). A plan keeps them current as it places and reserves; a caller
 * that keeps one between plans (with its FitIndex) passes every node change to `changed` too.
 */
export class GangCandidates {
  private readonly shapes = new Map<string, { req: ResourceRequest; racks: Map<string, PlacementNode[]>; asked: boolean }>();

  constructor(private readonly index: FitIndex) {}

  /** Rack -> the schedulable nodes outside `excluded` that fit `req` now, in best-fit order (compareFit). Do not mutate. */
  racks(req: ResourceRequest, excluded: ReadonlySet<string>): ReadonlyMap<string, PlacementNode[]> {
    const key = `${req.gpus}|${req.gpuModel}|${req.cpuCores}|${req.memoryMiB}`;
    let entry = this.shapes.get(key);
    if (!entry) {
      const racks = new Map<string, PlacementNode[]>();
      for (const n of this.index.fitting(req, excluded)) {
        const r = racks.get(n.rack);
        if (r) r.push(n);
        else racks.set(n.rack, [n]);
      }
      for (const r of racks.values()) r.sort(compareFit);
      this.shapes.set(key, (entry = { req, racks, asked: true }));
    }
    entry.asked = true;
    return entry.racks;
  }

  /** A node's new state (an allocation, a change read) or new exclusion (a reservation); `node` is its current state. */
  changed(node: PlacementNode, excluded: ReadonlySet<string>): void {
    for (const { req, racks } of this.shapes.values()) {
      const rack = racks.get(node.rack);
      const kept = (rack ?? []).filter((n) => n.id !== node.id);
      if (schedulable(node) && !excluded.has(node.id) && fitsNow(node, req)) insertByFit(kept, node);
      if (kept.length > 0) racks.set(node.rack, kept);
      else racks.delete(node.rack);
    }
  }

  /** Forgets the shapes no plan asked for since the last sweep (each costs a pass per node change). */
  sweep(): void {
    for (const [key, entry] of this.shapes) {
      if (!entry.asked) this.shapes.delete(key);
      else entry.asked = false;
    }
  }
}
