import { CordonReason, NodeTelemetryView, NodeView } from '@gantry/contracts';
import { InventoryResource, NodeHealth, believedTopology } from '@gantry/domain';
import { LiveFields, NodeRecord, reportedTopologyOf } from '@gantry/persistence';

const iso = (ms: number) => new Date(ms).toISOString();

function toTelemetry(live: LiveFields | undefined): NodeTelemetryView | null {
  if (!live) return null;
  // Telemetry comes with some beats only (ADR 0010): it may be older than the beat, or not known yet.
  const t = live.telemetry === null ? null : (JSON.parse(live.telemetry) as Pick<NodeTelemetryView, 'gpus' | 'cpu' | 'memory'>);
  return {
    sentAt: iso(live.sentAt),
    receivedAt: iso(live.receivedAt),
    telemetryAt: live.telemetryAt === null ? null : iso(live.telemetryAt),
    gpus: t?.gpus ?? [],
    cpu: t?.cpu ?? null,
    memory: t?.memory ?? null,
    running: JSON.parse(live.running) as NodeTelemetryView['running'],
  };
}

/** What the node's last recorded report claims beyond its pinned inventory (ADR 0035). */
function exceededOf(n: NodeRecord): InventoryResource[] {
  const reported = reportedTopologyOf(n);
  return reported && n.declared ? believedTopology(reported, n.declared).exceeded : [];
}

/** Durable topology and allocations (Postgres) joined with liveness and telemetry (Redis). */
export function toNodeView(n: NodeRecord, health: NodeHealth, lastSeenMs: number | null, live: LiveFields | undefined): NodeView {
  return {
    id: n.id,
    zone: n.zone,
    rack: n.rack,
    health,
    cordoned: n.cordoned,
    cordonReason: n.cordoned ? (n.cordonReason as CordonReason | null) : null,
    startFailures: n.startFailures,
    drainDeadline: n.drainDeadline ? n.drainDeadline.toISOString() : null,
    gpus: { model: n.gpuModel, total: n.gpusTotal, allocated: n.gpusAllocated },
    cpuCores: n.cpuCores,
    memoryMiB: n.memoryMiB,
    declared: n.declared ?? null,
    exceeded: exceededOf(n),
    lastHeartbeatAt: lastSeenMs === null ? null : new Date(lastSeenMs).toISOString(),
    telemetry: toTelemetry(live),
    firstSeenAt: n.firstSeenAt.toISOString(),
  };
}
