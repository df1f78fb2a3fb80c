import { ResourceRequest, fitsNow } from '../resources/resources';
import { FitIndex } from './fit-index';
import { PlacementNode, schedulable } from './schedulable';

/**
 * The nodes a gang could use, grouped by rack, for each request shape seen in a plan, kept current
 * as the plan places and reserves: a gang then looks at racks, not at every fitting node (tens of
 * thousands of them at 50,000 nodes, 10 ms per gang). Within a plan nodes only lose capacity and
 * gain exclusions, so a changed node is only rechecked where it was.
 */
export class GangCandidates {
  private readonly shapes = new Map<string, { req: ResourceRequest; racks: Map<string, PlacementNode[]> }>();

  constructor(private readonly index: FitIndex) {}

  /** Rack -> the schedulable nodes outside `excluded` that fit `req` now. Do not mutate. */
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
      this.shapes.set(key, (entry = { req, racks }));
    }
    return entry.racks;
  }

  /** A node's new state (an allocation) or new exclusion (a reservation); `node` is its current state. */
  changed(node: PlacementNode, excluded: ReadonlySet<string>): void {
    for (const { req, racks } of this.shapes.values()) {
      const rack = racks.get(node.rack);
      const kept = (rack ?? []).filter((n) => n.id !== node.id);
      if (schedulable(node) && !excluded.has(node.id) && fitsNow(node, req)) kept.push(node);
      if (kept.length > 0) racks.set(node.rack, kept);
      else racks.delete(node.rack);
    }
  }
}
