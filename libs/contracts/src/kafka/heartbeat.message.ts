import { Static, Type } from '@sinclair/typebox';
import { EpochMs, Int, JobId, NodeId, OpenObject, StoredObject, Text, Unit } from './field-schemas';
import { messageParser } from './message-parser';

// Telemetry and the running set are stored in Redis as sent and shown by GET /v1/nodes: StoredObjects.
export const GpuTelemetrySchema = StoredObject({
  index: Int(0, Number.MAX_SAFE_INTEGER, 'the device index (nvidia-smi), as CUDA_VISIBLE_DEVICES names it; only 0..63 are ever assigned'),
  model: Text({ minLength: 1, maxLength: 64 }),
  memoryMiB: Int(0),
  memoryUsedMiB: Int(0),
  utilization: Unit(),
  healthy: Type.Boolean({ description: 'false: never assigned to a rank (and not counted as capacity)' }),
});

export const CpuTelemetrySchema = StoredObject({ cores: Int(0, 65536), utilization: Unit() });

export const MemoryTelemetrySchema = StoredObject({ totalMiB: Int(0, 2 ** 40), usedMiB: Int(0) });

export const RunningAttemptSchema = StoredObject({ jobId: JobId(), attempt: Int(1) });

/**
 * gantry.heartbeats.v1: one per node every GANTRY_HEARTBEAT_MS; key = nodeId.
 * The telemetry (gpus, cpu, memory) may be left out of a beat, all three together: the control plane
 * keeps the last telemetry it received (ADR 0010). Liveness and `running` are in every beat.
 */
export const HeartbeatSchema = OpenObject(
  {
    nodeId: NodeId(),
    bootId: Text({ minLength: 1, maxLength: 128 }),
    seq: Int(0),
    sentAt: EpochMs(),
    zone: Text({ minLength: 1, maxLength: 64 }),
    rack: Text({ minLength: 1, maxLength: 64 }),
    address: Type.Optional(
      Text({ minLength: 1, maxLength: 255, description: "where the node listens (host name or IP): a gang's MASTER_ADDR when it holds rank 0" }),
    ),
    logsPort: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 65535, description: "the port on `address` where the agent serves its attempts' logs to the gateway (ADR 0021)" }),
    ),
    gpus: Type.Optional(Type.Array(GpuTelemetrySchema, { maxItems: 64 })),
    cpu: Type.Optional(CpuTelemetrySchema),
    memory: Type.Optional(MemoryTelemetrySchema),
    running: Type.Array(RunningAttemptSchema, { maxItems: 1024, description: "the agent's whole truth: every attempt it is executing now" }),
  },
  {
    description: 'gantry.heartbeats.v1 (key = nodeId); telemetry is gpus, cpu and memory together, or none of them (a liveness beat)',
    dependentRequired: { gpus: ['cpu', 'memory'], cpu: ['gpus', 'memory'], memory: ['gpus', 'cpu'] },
  },
);

export type GpuTelemetry = Static<typeof GpuTelemetrySchema>;
export type CpuTelemetry = Static<typeof CpuTelemetrySchema>;
export type MemoryTelemetry = Static<typeof MemoryTelemetrySchema>;
export type RunningAttempt = Static<typeof RunningAttemptSchema>;
export type HeartbeatMessage = Static<typeof HeartbeatSchema>;

/** A beat that carries telemetry (all three fields); a liveness beat carries none. */
export type TelemetryBeat = HeartbeatMessage & Required<Pick<HeartbeatMessage, 'gpus' | 'cpu' | 'memory'>>;

export function hasTelemetry(b: HeartbeatMessage): b is TelemetryBeat {
  return b.gpus !== undefined && b.cpu !== undefined && b.memory !== undefined;
}

/** Parses one gantry.heartbeats.v1 value. */
export const parseHeartbeat = messageParser(HeartbeatSchema);
