import { DependencyView, JobEventView, JobView, PlacementView } from '@gantry/contracts';
import { ArrayChildCounts, NO_CHILDREN, rankGpuIndices } from '@gantry/domain';
import { JobEventRecord, JobRecord } from '@gantry/persistence';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * `dependsOn`: the job's rows of job_dependencies (JobsService.dependenciesOf); required, so no caller
 * shows a job without them. `children`: an array parent's children by state (absent: none counted).
 */
export function toJobView(j: JobRecord, dependsOn: readonly DependencyView[], children?: ArrayChildCounts): JobView {
  return {
    id: j.id,
    owner: j.owner,
    queue: j.queue,
    name: j.name,
    image: j.image,
    command: j.command,
    env: j.env,
    labels: j.labels,
    resources: { gpus: j.gpus, gpuModel: j.gpuModel, cpuCores: j.cpuCores, memoryMiB: j.memoryMiB },
    nodes: j.nodes,
    maxRetries: j.maxRetries,
    retryPolicy: { maxRetries: j.maxRetries, backoffSeconds: j.backoffSeconds, maxBackoffSeconds: j.maxBackoffSeconds, retryOnExitCodes: j.retryOnExitCodes },
    notBefore: j.state === 'QUEUED' ? iso(j.notBefore) : null,
    maxRuntimeSeconds: j.maxRuntimeSeconds,
    dependsOn: [...dependsOn],
    state: j.state,
    cancelRequested: j.cancelRequested,
    attempt: j.attempt,
    pendingReason: j.pendingReason,
    exitCode: j.exitCode,
    reason: j.reason,
    nodeIds: j.nodeIds,
    placements: placementsOf(j),
    createdAt: j.createdAt.toISOString(),
    updatedAt: j.updatedAt.toISOString(),
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
    array: j.arraySize === null ? null : { size: j.arraySize, parallelism: j.arrayParallelism, children: { ...(children ?? NO_CHILDREN) } },
    arrayOf: j.arrayOf,
    arrayIndex: j.arrayIndex,
  };
}

/** Rank i runs on nodeIds[i] and holds its share of the attempt's devices (jobs.gpu_indices, `gpus` per rank). */
function placementsOf(j: JobRecord): PlacementView[] {
  return j.nodeIds.map((nodeId, rank) => ({ rank, nodeId, gpuIndices: rankGpuIndices(j.gpuIndices, j.gpus, j.nodeIds.length, rank) }));
}

export function toEventView(e: JobEventRecord): JobEventView {
  const view: JobEventView = { seq: e.seq, type: e.type as JobEventView['type'], at: e.at.toISOString() };
  if (e.fromState) view.fromState = e.fromState as JobEventView['fromState'];
  if (e.toState) view.toState = e.toState as JobEventView['toState'];
  if (e.attempt !== null) view.attempt = e.attempt;
  if (e.nodeIds) view.nodeIds = e.nodeIds;
  if (e.reason) view.reason = e.reason;
  return view;
}
