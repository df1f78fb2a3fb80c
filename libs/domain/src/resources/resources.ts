/** What a job asks of each node it runs on (contract: `resources` is per node). */
export interface ResourceRequest {
  gpus: number;
  /** null: any GPU model will do. */
  gpuModel: string | null;
  cpuCores: number;
  memoryMiB: number;
}

/** A node's capacity and what is already promised to live attempts. */
export interface NodeCapacity {
  gpuModel: string | null;
  gpusTotal: number;
  gpusAllocated: number;
  cpuCores: number;
  cpuAllocated: number;
  memoryMiB: number;
  memoryAllocated: number;
}

export type ShortResource = 'gpus' | 'gpuModel' | 'cpuCores' | 'memoryMiB';

function modelMatches(node: NodeCapacity, req: ResourceRequest): boolean {
  return req.gpus === 0 || req.gpuModel === null || node.gpuModel === req.gpuModel;
}

/** The first resource that keeps `req` off this node right now, or null when it fits. */
export function shortResource(node: NodeCapacity, req: ResourceRequest): ShortResource | null {
  if (!modelMatches(node, req)) return 'gpuModel';
  if (node.gpusTotal - node.gpusAllocated < req.gpus) return 'gpus';
  if (node.cpuCores - node.cpuAllocated < req.cpuCores) return 'cpuCores';
  if (node.memoryMiB - node.memoryAllocated < req.memoryMiB) return 'memoryMiB';
  return null;
}

export function fitsNow(node: NodeCapacity, req: ResourceRequest): boolean {
  return shortResource(node, req) === null;
}

/** Whether the node could hold `req` if it were empty: decides NO_MATCHING_NODES. */
export function couldEverFit(node: NodeCapacity, req: ResourceRequest): boolean {
  return modelMatches(node, req) && node.gpusTotal >= req.gpus && node.cpuCores >= req.cpuCores && node.memoryMiB >= req.memoryMiB;
}

export function allocate<N extends NodeCapacity>(node: N, req: ResourceRequest): N {
  return {
    ...node,
    gpusAllocated: node.gpusAllocated + req.gpus,
    cpuAllocated: node.cpuAllocated + req.cpuCores,
    memoryAllocated: node.memoryAllocated + req.memoryMiB,
  };
}
