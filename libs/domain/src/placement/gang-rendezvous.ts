/** Where a gang's ranks meet (torchrun's and NCCL's MASTER_ADDR / MASTER_PORT). */
export const MASTER_PORT_BASE = 29500;
/** GPU indices go up to 63 (a beat lists at most 64 GPUs): ports 29500..29563 belong to GPU attempts. */
const CPU_PORTS_FROM = MASTER_PORT_BASE + 64;
const CPU_PORTS = 1000;

/**
 * The attempt's MASTER_PORT on rank 0's node. With GPUs it is 29500 + rank 0's lowest device
 * index: devices are never shared by two live attempts, so no two live GPU gangs whose rank 0 shares
 * a node get the same port. Without GPUs nothing on the node is exclusive, so it is 29564 plus a
 * hash of the job id (1,000 ports): two CPU-only gangs with rank 0 on one node may collide (1 in 1,000).
 */
export function gangMasterPort(jobId: string, rank0GpuIndices: readonly number[]): number {
  if (rank0GpuIndices.length > 0) return MASTER_PORT_BASE + Math.min(...rank0GpuIndices);
  let h = 0;
  for (let i = 0; i < jobId.length; i++) h = (Math.imul(h, 31) + jobId.charCodeAt(i)) >>> 0;
  return CPU_PORTS_FROM + (h % CPU_PORTS);
}

/** Rank `rank`'s devices out of an attempt's flat list (every rank holds `gpus`); [] when the list does not cover the attempt (placed before devices were assigned). */
export function rankGpuIndices(flat: readonly number[], gpus: number, ranks: number, rank: number): number[] {
  if (gpus <= 0 || flat.length !== gpus * ranks) return [];
  return flat.slice(rank * gpus, (rank + 1) * gpus);
}
