import { gangMasterPort, rankGpuIndices } from '@gantry/domain';
import { RunCommand } from './agent-command.message';

export interface RunnableJob {
  id: string;
  owner: string;
  /** Its queue lets it share the node's IPC (queues' hostIpc, read when the RUN is built); absent: false. */
  hostIpc?: boolean;
  image: string;
  command: string[];
  env: Record<string, string>;
  gpus: number;
  gpuModel: string | null;
  cpuCores: number;
  memoryMiB: number;
  /** The current attempt's GPU devices, rank by rank (`gpus` each); empty for an attempt placed before devices were assigned. */
  gpuIndices?: number[];
  /** Rank 0's node address when the attempt was placed; null: the node did not say (its id stands in). */
  masterAddr?: string | null;
  maxRuntimeSeconds?: number | null;
  /** An array's child: its index (GANTRY_ARRAY_INDEX); null or absent for any other job. */
  arrayIndex?: number | null;
}

/** The RUN of one gang rank: rank i runs on nodeIds[i]. Repeated verbatim (but for issuedAt) when a RUN must be re-sent. */
export function buildRunCommand(job: RunnableJob, attempt: number, nodeIds: string[], rank: number, issuedAt: number): RunCommand {
  const flat = job.gpuIndices ?? [];
  const covered = job.gpus > 0 && flat.length === job.gpus * nodeIds.length;
  const run: RunCommand = {
    type: 'RUN',
    nodeId: nodeIds[rank],
    jobId: job.id,
    attempt,
    issuedAt,
    owner: job.owner,
    image: job.image,
    command: job.command,
    env: job.env,
    resources: { gpus: job.gpus, gpuModel: job.gpuModel, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
    gang: {
      size: nodeIds.length,
      rank,
      nodeIds,
      masterAddr: job.masterAddr ?? nodeIds[0],
      masterPort: gangMasterPort(job.id, rankGpuIndices(flat, job.gpus, nodeIds.length, 0)),
    },
  };
  // A job without GPUs holds none ([]: the agent hides every device); an attempt placed before
  // devices were assigned says nothing, and the agent leaves the variables alone.
  if (job.gpus === 0 || covered) run.gpuIndices = rankGpuIndices(flat, job.gpus, nodeIds.length, rank);
  if (job.maxRuntimeSeconds) run.maxRuntimeSeconds = job.maxRuntimeSeconds;
  if (job.arrayIndex !== null && job.arrayIndex !== undefined) run.arrayIndex = job.arrayIndex;
  if (job.hostIpc) run.hostIpc = true;
  return run;
}

/** Every rank's RUN, one at a time: a 1,024-rank gang's RUNs are never all in memory at once. */
export function* runCommandsOf(job: RunnableJob, attempt: number, nodeIds: string[], issuedAt: number): Generator<RunCommand> {
  for (let rank = 0; rank < nodeIds.length; rank++) yield buildRunCommand(job, attempt, nodeIds, rank, issuedAt);
}
