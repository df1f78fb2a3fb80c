import { TelemetryBeat } from '@gantry/contracts';
import { NodeTopology } from '@gantry/persistence';

/**
 * The durable part of a heartbeat. A node reports one GPU model (the most common among its GPUs
 * if they differ); only healthy GPUs count as capacity.
 */
export function topologyOf(beat: TelemetryBeat): NodeTopology {
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

export function topologySignature(t: NodeTopology): string {
  return [t.zone, t.rack, t.gpuModel ?? '', t.gpusTotal, t.cpuCores, t.memoryMiB].join('|');
}
