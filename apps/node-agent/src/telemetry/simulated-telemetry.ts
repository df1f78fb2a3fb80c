import { SimulatedNodeSpec } from '../fleet/fleet-layout';
import { NodeTelemetry, TelemetrySource } from './telemetry-source';

/** Fake telemetry that drifts: busier when the node runs work, never outside 0..1. */
export class SimulatedTelemetry implements TelemetrySource {
  private cpuUtil = Math.random() * 0.2;
  private gpuUtil: number[];

  constructor(private readonly spec: SimulatedNodeSpec, private readonly busyGpus: () => number) {
    this.gpuUtil = Array.from({ length: spec.gpuCount }, () => 0);
  }

  private drift(v: number, target: number): number {
    return Math.min(1, Math.max(0, v + (target - v) * 0.3 + (Math.random() - 0.5) * 0.05));
  }

  async read(): Promise<NodeTelemetry> {
    const busy = this.busyGpus();
    this.gpuUtil = this.gpuUtil.map((u, i) => this.drift(u, i < busy ? 0.9 : 0.02));
    this.cpuUtil = this.drift(this.cpuUtil, busy > 0 ? 0.5 : 0.05);
    const s = this.spec;
    return {
      gpus: this.gpuUtil.map((u, index) => ({
        index, model: s.gpuModel ?? 'none', memoryMiB: s.gpuMemoryMiB, memoryUsedMiB: Math.round(u * s.gpuMemoryMiB * 0.9),
        utilization: Number(u.toFixed(3)), healthy: true,
      })),
      cpu: { cores: s.cpuCores, utilization: Number(this.cpuUtil.toFixed(3)) },
      memory: { totalMiB: s.memoryMiB, usedMiB: Math.round(s.memoryMiB * (0.05 + this.cpuUtil * 0.5)) },
    };
  }
}
