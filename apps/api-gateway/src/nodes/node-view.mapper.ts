import { NodeTelemetryView, NodeView } from '@gantry/contracts';
import { NodeHealth } from '@gantry/domain';
import { NodeRecord } from '@gantry/persistence';

export interface LiveFields {
  sentAt: number;
  receivedAt: number;
  payload: string;
}

function toTelemetry(live: LiveFields | undefined): NodeTelemetryView | null {
  if (!live) return null;
  const p = JSON.parse(live.payload) as Partial<NodeTelemetryView>;
  return {
    sentAt: new Date(live.sentAt).toISOString(), receivedAt: new Date(live.receivedAt).toISOString(),
    gpus: p.gpus ?? [], cpu: p.cpu!, memory: p.memory!, running: p.running ?? [],
  };
}

/** Durable topology and allocations (Postgres) joined with liveness and telemetry (Redis). */
export function toNodeView(n: NodeRecord, health: NodeHealth, lastSeenMs: number | null, live: LiveFields | undefined): NodeView {
  return {
    id: n.id, zone: n.zone, rack: n.rack, health, cordoned: n.cordoned,
    gpus: { model: n.gpuModel, total: n.gpusTotal, allocated: n.gpusAllocated },
    cpuCores: n.cpuCores, memoryMiB: n.memoryMiB,
    lastHeartbeatAt: lastSeenMs === null ? null : new Date(lastSeenMs).toISOString(),
    telemetry: toTelemetry(live),
    firstSeenAt: n.firstSeenAt.toISOString(),
  };
}
