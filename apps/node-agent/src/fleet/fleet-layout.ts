/** The shape of one simulated node: deterministic from its index, so restarts recreate the same fleet. */
export interface SimulatedNodeSpec {
  nodeId: string;
  zone: string;
  rack: string;
  gpuModel: string | null;
  gpuCount: number;
  gpuMemoryMiB: number;
  cpuCores: number;
  memoryMiB: number;
}

const MODELS = [
  // share of the fleet, model, GPUs per node, GPU memory, cores, memory
  { upTo: 0.5, model: 'H100', gpus: 8, gpuMem: 81920, cores: 96, mem: 1048576 },
  { upTo: 0.8, model: 'A100', gpus: 8, gpuMem: 81920, cores: 64, mem: 524288 },
  { upTo: 0.95, model: 'L4', gpus: 4, gpuMem: 24576, cores: 32, mem: 262144 },
  { upTo: 1, model: null, gpus: 0, gpuMem: 0, cores: 32, mem: 131072 },
] as const;

export const NODES_PER_RACK = 20;
export const ZONES = ['zone-a', 'zone-b', 'zone-c'];

/** Node i of a fleet: racks of 20, racks spread round-robin over three zones, a fixed model mix. */
export function simulatedNode(prefix: string, i: number): SimulatedNodeSpec {
  const rackIndex = Math.floor(i / NODES_PER_RACK);
  // A low-discrepancy fraction spreads models evenly across racks without randomness.
  const fraction = (i * 0.6180339887) % 1;
  const m = MODELS.find((x) => fraction < x.upTo)!;
  return {
    nodeId: `${prefix}-${String(i).padStart(5, '0')}`,
    zone: ZONES[rackIndex % ZONES.length],
    rack: `${prefix}-r${String(rackIndex).padStart(4, '0')}`,
    gpuModel: m.model,
    gpuCount: m.gpus,
    gpuMemoryMiB: m.gpuMem,
    cpuCores: m.cores,
    memoryMiB: m.mem,
  };
}

/** What a simulated node declares when its fleet enrolls it (ADR 0035): exactly its spec. */
export function simulatedInventory(
  spec: SimulatedNodeSpec,
  address: string | null,
): { gpus: { model: string; count: number } | null; cpuCores: number; memoryMiB: number; address: string | null } {
  return {
    gpus: spec.gpuModel !== null && spec.gpuCount > 0 ? { model: spec.gpuModel, count: spec.gpuCount } : null,
    cpuCores: spec.cpuCores,
    memoryMiB: spec.memoryMiB,
    address,
  };
}
