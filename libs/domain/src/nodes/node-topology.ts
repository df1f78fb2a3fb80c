/** The highest GPU device index placement hands out (a RUN's gpuIndices are 0..63). */
export const MAX_GPU_INDEX = 63;

/** The durable part of a node: where it is and what it has, as the nodes table records it. */
export interface NodeTopology {
  id: string;
  zone: string;
  rack: string;
  /** null for a node without GPUs. */
  gpuModel: string | null;
  /** Healthy GPUs of gpuModel: the length of gpuIndices. */
  gpusTotal: number;
  /** Device indices of those GPUs, ascending: the only devices placement hands out. */
  gpuIndices: number[];
  /**
   * GPUs of gpuModel the node reports, healthy or not (default gpusTotal): what a first report pins
   * (ADR 0035), so a GPU unhealthy at the first report is believed once it recovers.
   */
  gpusInstalled?: number;
  /** Where the node listens (its heartbeats' `address`); null when it did not say. Gangs' MASTER_ADDR. */
  address: string | null;
  /** The port on `address` where the node's agent serves logs (heartbeats' `logsPort`); null when it did not say. */
  logsPort: number | null;
  cpuCores: number;
  memoryMiB: number;
}

/** What a heartbeat that carries telemetry says about the node's hardware (the fields topology needs). */
export interface ReportedHardware {
  nodeId: string;
  zone: string;
  rack: string;
  gpus: ReadonlyArray<{ index: number; model: string; healthy: boolean }>;
  address?: string;
  logsPort?: number;
  cpu: { cores: number };
  memory: { totalMiB: number };
}

/**
 * A node's topology from its telemetry. A node has one GPU model (the most common among its GPUs
 * if they differ, the first by name on a tie); only healthy GPUs of that model count as capacity,
 * and only their device indices are ever assigned to a rank.
 */
export function topologyOf(beat: ReportedHardware): NodeTopology {
  const counts = new Map<string, number>();
  for (const g of beat.gpus) counts.set(g.model, (counts.get(g.model) ?? 0) + 1);
  const model = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? null;
  // An index reported twice counts once: capacity is devices, and a device is handed out once. A
  // RUN names at most 64 devices, 0..63 (a beat lists at most 64 GPUs): an index past that is not capacity.
  const ofModel = beat.gpus.filter((g) => g.model === model && g.index <= MAX_GPU_INDEX);
  const indices = [...new Set(ofModel.filter((g) => g.healthy).map((g) => g.index))].sort((a, b) => a - b);
  return {
    id: beat.nodeId,
    zone: beat.zone,
    rack: beat.rack,
    gpuModel: model,
    gpusTotal: indices.length,
    gpuIndices: indices,
    gpusInstalled: new Set(ofModel.map((g) => g.index)).size,
    address: beat.address ?? null,
    logsPort: beat.logsPort ?? null,
    cpuCores: beat.cpu.cores,
    memoryMiB: beat.memory.totalMiB,
  };
}

/** Equal for two topologies exactly when a rewrite of one into the other would change nothing. */
export function topologySignature(t: NodeTopology): string {
  return [t.zone, t.rack, t.gpuModel ?? '', t.gpusTotal, t.gpuIndices.join(','), t.cpuCores, t.memoryMiB, t.address ?? '', t.logsPort ?? ''].join('|');
}
