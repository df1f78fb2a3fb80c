import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The driver's devices every GPU job needs besides its GPUs' own (those present are bound). */
const CONTROL_DEVICES = ['nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-modeset'];

/**
 * The NVIDIA device files of this host: each GPU's `/dev/nvidia<minor>` by its index. Indices are
 * nvidia-smi's, in PCI bus order; the driver says each GPU's minor number in
 * `/proc/driver/nvidia/gpus/<bus id>/information` ("Device Minor: N"), read once at start. Without
 * that file (no driver, a test host) the minor is taken to be the index.
 */
export class GpuDeviceFiles {
  private readonly minors: number[];

  constructor(
    private readonly devRoot = '/dev',
    procRoot = '/proc',
  ) {
    this.minors = readMinors(join(procRoot, 'driver/nvidia/gpus'));
  }

  /** Whether this host has GPU device files at all: only then can a sandbox hide the ones a rank does not hold. */
  get present(): boolean {
    return existsSync(join(this.devRoot, 'nvidiactl'));
  }

  /** The device files one rank keeps: its GPUs' and the driver's control devices, those that exist. */
  filesFor(indices: readonly number[]): string[] {
    const gpus = indices.map((i) => join(this.devRoot, `nvidia${this.minors[i] ?? i}`));
    return [...CONTROL_DEVICES.map((d) => join(this.devRoot, d)), ...gpus].filter((f) => existsSync(f));
  }
}

function readMinors(dir: string): number[] {
  let busIds: string[];
  try {
    busIds = readdirSync(dir).sort();
  } catch {
    return [];
  }
  return busIds.map((id, i) => {
    try {
      const m = /Device Minor:\s*(\d+)/.exec(readFileSync(join(dir, id, 'information'), 'utf8'));
      return m ? Number(m[1]) : i;
    } catch {
      return i;
    }
  });
}
