import { CpuTelemetry, GpuTelemetry, MemoryTelemetry } from '@gantry/contracts';

export interface NodeTelemetry {
  gpus: GpuTelemetry[];
  cpu: CpuTelemetry;
  memory: MemoryTelemetry;
}

/** Where a node's telemetry comes from: the host (nvidia-smi, /proc) or a simulation. */
export interface TelemetrySource {
  read(): Promise<NodeTelemetry>;
}
