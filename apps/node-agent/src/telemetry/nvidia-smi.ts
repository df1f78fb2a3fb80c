import { execFile } from 'node:child_process';
import { GpuTelemetry } from '@gantry/contracts';

/** The query the agent runs; one CSV line per GPU. */
export const NVIDIA_SMI_ARGS = ['--query-gpu=index,name,memory.total,memory.used,utilization.gpu,pstate', '--format=csv,noheader,nounits'];

/** "H100" from "NVIDIA H100 80GB HBM3": the model name schedulers match on. */
export function gpuModelName(name: string): string {
  const known = /(H200|H100|A100|A10G|A10|L40S|L40|L4|V100|T4|B200|GB200|A30|A40|RTX ?\d{4})/i.exec(name);
  return (known ? known[1] : name.replace(/^NVIDIA\s+/i, '').split(/\s+/)[0]).toUpperCase().replace(/\s/g, '');
}

/** Parses `nvidia-smi` CSV output; a GPU whose numbers are unreadable ("[N/A]", "ERR!") is unhealthy. */
export function parseNvidiaSmi(csv: string): GpuTelemetry[] {
  return csv
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((line) => {
      const [index, name, total, used, util] = line.split(',').map((s) => s.trim());
      const nums = [Number(index), Number(total), Number(used), Number(util)];
      const healthy = nums.every(Number.isFinite);
      return {
        index: Number.isFinite(nums[0]) ? nums[0] : 0,
        model: gpuModelName(name ?? 'unknown'),
        memoryMiB: Number.isFinite(nums[1]) ? nums[1] : 0,
        memoryUsedMiB: Number.isFinite(nums[2]) ? nums[2] : 0,
        utilization: Number.isFinite(nums[3]) ? Math.min(1, Math.max(0, nums[3] / 100)) : 0,
        healthy,
      };
    });
}

/** Runs nvidia-smi (`command`: a name on PATH or a path); null when it is not installed (a CPU-only host). */
export function queryNvidiaSmi(timeoutMs = 5000, command = 'nvidia-smi'): Promise<GpuTelemetry[] | null> {
  return new Promise((resolve) => {
    execFile(command, NVIDIA_SMI_ARGS, { timeout: timeoutMs }, (err, stdout) => {
      if (err) return resolve((err as NodeJS.ErrnoException).code === 'ENOENT' ? null : []);
      resolve(parseNvidiaSmi(stdout));
    });
  });
}
