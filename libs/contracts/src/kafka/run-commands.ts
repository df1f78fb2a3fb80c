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

/** One RUN per gang rank; rank i runs on nodeIds[i]. Repeated verbatim when a RUN must be re-sent. */
export function buildRunCommands(job: RunnableJob, attempt: number, nodeIds: string[]): RunCommand[] {
  return nodeIds.map((nodeId, rank) => ({
    type: 'RUN',
    nodeId,
    jobId: job.id,
    attempt,
    image: job.image,
    command: job.command,
    env: job.env,
    resources: { gpus: job.gpus, gpuModel: job.gpuModel, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
    gang: { size: nodeIds.length, rank, nodeIds },
  }));
}
