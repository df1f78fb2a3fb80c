import { cpus, freemem, loadavg, totalmem } from 'node:os';
import { queryNvidiaSmi } from './nvidia-smi';
import { NodeTelemetry, TelemetrySource } from './telemetry-source';

const MiB = 1024 * 1024;

/**
 * A real host: GPUs from nvidia-smi when it exists (none otherwise), CPU and memory from the OS.
 * A GPU whose numbers nvidia-smi cannot read is reported unhealthy, and is never assigned.
 */
export class HostTelemetry implements TelemetrySource {
  constructor(private readonly nvidiaSmi = 'nvidia-smi') {}

  async read(): Promise<NodeTelemetry> {
    const cores = cpus().length;
    return {
      gpus: (await queryNvidiaSmi(5000, this.nvidiaSmi)) ?? [],
      cpu: { cores, utilization: Math.min(1, loadavg()[0] / Math.max(1, cores)) },
      memory: { totalMiB: Math.floor(totalmem() / MiB), usedMiB: Math.floor((totalmem() - freemem()) / MiB) },
    };
  }
}
