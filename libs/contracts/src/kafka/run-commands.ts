import { RunCommand } from './agent-command.message';

export interface RunnableJob {
  id: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  gpus: number;
  gpuModel: string | null;
  cpuCores: number;
  memoryMiB: number;
}

/** The RUN of one gang rank: rank i runs on nodeIds[i]. Repeated verbatim (but for issuedAt) when a RUN must be re-sent. */
export function buildRunCommand(job: RunnableJob, attempt: number, nodeIds: string[], rank: number, issuedAt: number): RunCommand {
  return {
    type: 'RUN',
    nodeId: nodeIds[rank],
    jobId: job.id,
    attempt,
    issuedAt,
    image: job.image,
    command: job.command,
    env: job.env,
    resources: { gpus: job.gpus, gpuModel: job.gpuModel, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
    gang: { size: nodeIds.length, rank, nodeIds },
  };
}

/** Every rank's RUN, one at a time: a 1,024-rank gang's RUNs are never all in memory at once. */
export function* runCommandsOf(job: RunnableJob, attempt: number, nodeIds: string[], issuedAt: number): Generator<RunCommand> {
  for (let rank = 0; rank < nodeIds.length; rank++) yield buildRunCommand(job, attempt, nodeIds, rank, issuedAt);
}
