import type { InventoryPatch } from '@gantry/client';
import { UsageError } from './cli-error';

/** The flags `gantry nodes enroll` and `gantry nodes declare` take for a node's inventory (ADR 0035). */
export interface InventoryFlags {
  /** `<model>:<count>`, or `none`. */
  gpus?: string;
  cpuCores?: string;
  memoryMib?: string;
  /** A host name or IP, or `none` (unpinned: the node's reported one is pinned). */
  address?: string;
}

const whole = (raw: string, flag: string) => {
  if (!/^\d+$/.test(raw)) throw new UsageError(`${flag} must be a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
};

/** The fields the flags give (the server checks their bounds); empty when none is given. */
export function inventoryFromFlags(f: InventoryFlags): InventoryPatch {
  const out: InventoryPatch = {};
  if (f.gpus !== undefined) {
    if (f.gpus === 'none') out.gpus = null;
    else {
      const m = /^(.+):(\d+)$/.exec(f.gpus);
      if (!m) throw new UsageError(`--gpus must be <model>:<count> (H100:8) or none, got ${JSON.stringify(f.gpus)}`);
      out.gpus = { model: m[1], count: Number(m[2]) };
    }
  }
  if (f.cpuCores !== undefined) out.cpuCores = whole(f.cpuCores, '--cpu-cores');
  if (f.memoryMib !== undefined) out.memoryMiB = whole(f.memoryMib, '--memory-mib');
  if (f.address !== undefined) out.address = f.address === 'none' ? null : f.address;
  return out;
}

/** A whole inventory for an enrollment, or null when no flag was given; cores and memory are then required. */
export function declaredInventory(f: InventoryFlags): (Required<Pick<InventoryPatch, 'cpuCores' | 'memoryMiB'>> & InventoryPatch) | null {
  const patch = inventoryFromFlags(f);
  if (Object.keys(patch).length === 0) return null;
  if (patch.cpuCores === undefined || patch.memoryMiB === undefined)
    throw new UsageError('an inventory needs --cpu-cores and --memory-mib (and --gpus and --address where the node has them)');
  return { ...patch, cpuCores: patch.cpuCores, memoryMiB: patch.memoryMiB };
}
