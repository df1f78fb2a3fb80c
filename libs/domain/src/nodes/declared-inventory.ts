import { NodeTopology } from './node-topology';

/**
 * What a node is trusted to have (contract §5.2, ADR 0035): declared by an operator at enrollment
 * or with PATCH /v1/nodes/{id}, or else pinned from the first inventory the node reported.
 * Placement never believes more than this, whatever the node reports later.
 */
export interface NodeInventory {
  /** null: no GPUs. */
  gpus: { model: string; count: number } | null;
  cpuCores: number;
  memoryMiB: number;
  /** Where the gateway dials the node (its logs) and a gang's MASTER_ADDR points; null until declared or first reported. */
  address: string | null;
}

/** What a node can report beyond its inventory (the label of gantry_node_inventory_exceeded_total). */
export const INVENTORY_RESOURCES = ['gpus', 'cpuCores', 'memoryMiB', 'address'] as const;
export type InventoryResource = (typeof INVENTORY_RESOURCES)[number];

/** The inventory a report amounts to: what is pinned for a node enrolled without one (its GPUs healthy or not). */
export function inventoryOf(reported: NodeTopology): NodeInventory {
  const count = Math.max(reported.gpusInstalled ?? 0, reported.gpusTotal);
  return {
    gpus: reported.gpuModel !== null && count > 0 ? { model: reported.gpuModel, count } : null,
    cpuCores: reported.cpuCores,
    memoryMiB: reported.memoryMiB,
    address: reported.address,
  };
}

/**
 * The pinned inventory once `reported` has been heard: a node with none pins its report whole; an
 * inventory without an address pins the first address the node reports (trust on first use, like
 * the rest of an undeclared inventory). Anything already pinned stays. Returns `pinned` itself when
 * nothing changes, so the caller writes only what did.
 */
export function pinAfterReport(pinned: NodeInventory | null, reported: NodeTopology): NodeInventory {
  if (pinned === null) return inventoryOf(reported);
  if (pinned.address === null && reported.address !== null) return { ...pinned, address: reported.address };
  return pinned;
}

export interface BelievedTopology {
  /** What placement, the summary and the views count: the lesser of pinned and reported. */
  topology: NodeTopology;
  /** What the report claims beyond the pinned inventory, in INVENTORY_RESOURCES order. */
  exceeded: InventoryResource[];
}

/**
 * The capacity a node is credited with: for each resource the lesser of what is pinned and what it
 * reports now. GPUs count only of the pinned model (a node reporting another model is credited
 * none), and are the lowest healthy device indices it reports, so a device placement hands out is
 * one the node says it has. The address is the pinned one, never the reported one: the gateway
 * dials it. Zone, rack and the logs port are the node's to say.
 */
export function believedTopology(reported: NodeTopology, pinned: NodeInventory): BelievedTopology {
  const sameModel = pinned.gpus !== null && reported.gpuModel === pinned.gpus.model;
  const gpuIndices = sameModel ? reported.gpuIndices.slice(0, pinned.gpus!.count) : [];
  const exceeded: InventoryResource[] = [];
  if (reported.gpusTotal > (sameModel ? pinned.gpus!.count : 0)) exceeded.push('gpus');
  if (reported.cpuCores > pinned.cpuCores) exceeded.push('cpuCores');
  if (reported.memoryMiB > pinned.memoryMiB) exceeded.push('memoryMiB');
  if (reported.address !== null && pinned.address !== null && reported.address !== pinned.address) exceeded.push('address');
  return {
    topology: {
      ...reported,
      gpuModel: pinned.gpus?.model ?? null,
      gpusTotal: gpuIndices.length,
      gpuIndices,
      cpuCores: Math.min(reported.cpuCores, pinned.cpuCores),
      memoryMiB: Math.min(reported.memoryMiB, pinned.memoryMiB),
      address: pinned.address,
    },
    exceeded,
  };
}

/** Equal exactly when two inventories pin the same thing. */
export function sameInventory(a: NodeInventory | null, b: NodeInventory | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.gpus?.model === b.gpus?.model &&
    (a.gpus?.count ?? 0) === (b.gpus?.count ?? 0) &&
    a.cpuCores === b.cpuCores &&
    a.memoryMiB === b.memoryMiB &&
    a.address === b.address
  );
}

/** A change to a pinned inventory (PATCH /v1/nodes/{id}): each field given replaces the pinned one; null gpus means none, null address unpins. */
export type InventoryPatch = Partial<NodeInventory>;

/**
 * The pinned inventory after an operator's patch (JSON merge patch), or the fields it lacks: a node
 * with nothing pinned yet (enrolled without an inventory, not yet reported) needs its cores and memory.
 */
export function patchInventory(
  pinned: NodeInventory | null,
  patch: InventoryPatch,
): { inventory: NodeInventory } | { missing: Array<'cpuCores' | 'memoryMiB'> } {
  const cpuCores = patch.cpuCores ?? pinned?.cpuCores;
  const memoryMiB = patch.memoryMiB ?? pinned?.memoryMiB;
  if (cpuCores === undefined || memoryMiB === undefined) {
    return { missing: [...(cpuCores === undefined ? ['cpuCores' as const] : []), ...(memoryMiB === undefined ? ['memoryMiB' as const] : [])] };
  }
  return {
    inventory: {
      gpus: patch.gpus !== undefined ? patch.gpus : (pinned?.gpus ?? null),
      cpuCores,
      memoryMiB,
      address: patch.address !== undefined ? patch.address : (pinned?.address ?? null),
    },
  };
}
