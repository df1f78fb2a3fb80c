import { NodeHealth } from '../nodes/node-health';
import { NodeCapacity } from '../resources/resources';

export interface PlacementNode extends NodeCapacity {
  id: string;
  rack: string;
  health: NodeHealth;
  cordoned: boolean;
  /** Allocation version read with the snapshot; the commit compares and sets it. */
  version: number;
}

/** Only a HEALTHY, uncordoned node takes new work. */
export function schedulable(node: PlacementNode): boolean {
  return node.health === 'HEALTHY' && !node.cordoned;
}
