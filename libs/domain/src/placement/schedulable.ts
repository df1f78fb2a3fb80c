import { NodeHealth } from '../nodes/node-health';
import { NodeCapacity } from '../resources/resources';
import { NodeDevices } from './gpu-devices';

/** A node as the planner sees it: capacity counts, and which GPU devices are usable and held (gpu-devices.ts). */
export interface PlacementNode extends NodeCapacity, NodeDevices {
  id: string;
  rack: string;
  health: NodeHealth;
  cordoned: boolean;
  /** Allocation version read with the snapshot; the commit compares and sets it. */
  version: number;
}

/** Only a HEALTHY, uncordoned node takes new work. */
export function schedulable(node: Pick<PlacementNode, 'health' | 'cordoned'>): boolean {
  return node.health === 'HEALTHY' && !node.cordoned;
}
