import { MASTER_PORT_BASE } from '@gantry/domain';
import { ExecutionSpec } from './executor';

/**
 * GANTRY_NODE_IDS is left out above this many bytes and the ids go to a file instead
 * (GANTRY_NODE_IDS_FILE): Linux refuses to start a process with one environment string over
 * 128 KiB, and 1,024 node ids of up to 253 characters can reach 260 KB. A 1,024-rank gang whose
 * ids average up to 95 characters still fits.
 */
export const NODE_IDS_ENV_MAX_BYTES = 96 * 1024;

export interface JobEnvironment {
  env: Record<string, string>;
  /** The gang's node ids, one per line, to write to the file GANTRY_NODE_IDS_FILE names; null when they are in GANTRY_NODE_IDS. */
  nodeIdsFile: string | null;
}

/**
 * The environment one rank starts with: the agent's PATH and HOME, then the job's own env, then
 * Gantry's variables, which win over the job's (they describe the placement, which the job does
 * not choose):
 * - RANK, WORLD_SIZE, LOCAL_RANK (0: one rank per node), MASTER_ADDR, MASTER_PORT (torchrun, NCCL);
 * - GANTRY_JOB_ID, GANTRY_ATTEMPT, GANTRY_NODE_ID, GANTRY_NODE_IDS (comma-separated, by rank) or
 *   GANTRY_NODE_IDS_FILE; GANTRY_GANG_SIZE, GANTRY_GANG_RANK, GANTRY_GANG_NODES (the v1 names);
 * - CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES: the rank's devices ("" and "none" for a job
 *   without GPUs), when the RUN says which, with CUDA_DEVICE_ORDER=PCI_BUS_ID: the indices are
 *   nvidia-smi's (PCI bus order), and CUDA numbers devices fastest first unless told otherwise, so
 *   on a node of mixed GPUs index 0 could name another device than the one placed (or a sick one);
 * - GANTRY_ARRAY_INDEX: an array's child's index (ADR 0025), when the RUN says it.
 */
export function jobEnvironment(spec: ExecutionSpec, agent: { path?: string; home?: string; nodeIdsPath: string }): JobEnvironment {
  const ids = spec.gang.nodeIds.join(',');
  const idsFit = Buffer.byteLength(ids) <= NODE_IDS_ENV_MAX_BYTES;
  const env: Record<string, string> = {
    PATH: agent.path ?? '/usr/bin:/bin',
    HOME: agent.home ?? '/tmp',
    ...spec.env,
    RANK: String(spec.gang.rank),
    WORLD_SIZE: String(spec.gang.size),
    LOCAL_RANK: '0',
    MASTER_ADDR: spec.gang.masterAddr ?? spec.gang.nodeIds[0] ?? spec.nodeId,
    MASTER_PORT: String(spec.gang.masterPort ?? MASTER_PORT_BASE),
    GANTRY_JOB_ID: spec.jobId,
    GANTRY_ATTEMPT: String(spec.attempt),
    GANTRY_NODE_ID: spec.nodeId,
    GANTRY_GANG_SIZE: String(spec.gang.size),
    GANTRY_GANG_RANK: String(spec.gang.rank),
  };
  if (idsFit) {
    env.GANTRY_NODE_IDS = ids;
    env.GANTRY_GANG_NODES = ids;
  } else {
    delete env.GANTRY_NODE_IDS;
    delete env.GANTRY_GANG_NODES;
    env.GANTRY_NODE_IDS_FILE = agent.nodeIdsPath;
  }
  if (spec.gpuIndices) {
    env.CUDA_VISIBLE_DEVICES = spec.gpuIndices.join(',');
    env.CUDA_DEVICE_ORDER = 'PCI_BUS_ID';
    env.NVIDIA_VISIBLE_DEVICES = spec.gpuIndices.length > 0 ? spec.gpuIndices.join(',') : 'none';
  }
  if (spec.arrayIndex !== undefined) env.GANTRY_ARRAY_INDEX = String(spec.arrayIndex);
  else delete env.GANTRY_ARRAY_INDEX;
  return { env, nodeIdsFile: idsFit ? null : spec.gang.nodeIds.join('\n') + '\n' };
}
