/** The durable part of a node: where it is and what it has, as the nodes table records it. */
export interface NodeTopology {
  id: string;
  zone: string;
  rack: string;
  /** null for a node without GPUs. */
  gpuModel: string | null;
  /** Healthy GPUs of gpuModel. */
  gpusTotal: number;
  cpuCores: number;
  memoryMiB: number;
}

/** What a heartbeat that carries telemetry says about the node's hardware (the fields topology needs). */
export interface ReportedHardware {
  nodeId: string;
  zone: string;
  rack: string;
  gpus: ReadonlyArray<{ model: string; healthy: boolean }>;
  cpu: { cores: number };
  memory: { totalMiB: number };
}

/**
 * A node's topology from its telemetry. A node has one GPU model (the most common among its GPUs
 * if they differ, the first by name on a tie); only healthy GPUs of that model count as capacity.
 */
export function topologyOf(beat: ReportedHardware): NodeTopology {
  const counts = new Map<string, number>();
  for (const g of beat.gpus) counts.set(g.model, (counts.get(g.model) ?? 0) + 1);
  const model = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? null;
  return {
    id: beat.nodeId,
    zone: beat.zone,
    rack: beat.rack,
    gpuModel: model,
    gpusTotal: beat.gpus.filter((g) => g.healthy && g.model === model).length,
    cpuCores: beat.cpu.cores,
    memoryMiB: beat.memory.totalMiB,
  };
}

/** Equal for two topologies exactly when a rewrite of one into the other would change nothing. */
export function topologySignature(t: NodeTopology): string {
  return [t.zone, t.rack, t.gpuModel ?? '', t.gpusTotal, t.cpuCores, t.memoryMiB].join('|');
}
