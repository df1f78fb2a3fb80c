import { JobState, isTerminal } from './job-state';

/**
 * Job dependencies (contract §4.7, ADR 0023): a job waits for other jobs to end.
 *
 * `succeeded` is Slurm's `afterok`, `finished` its `afterany`. Cycles cannot form: a job may name
 * only jobs that already exist when it is created, and its own id is made by the server then, so
 * every edge points from a newer job to an older one and following edges always goes back in time.
 */
export type DependencyCondition = 'succeeded' | 'finished';
export const DEPENDENCY_CONDITIONS: readonly DependencyCondition[] = ['succeeded', 'finished'];

/** Most dependencies one job may name: enough for a fan-in step, small enough to lock at once. */
export const DEPENDS_ON_MAX = 32;

export type DependencyStatus =
  /** Satisfied for good: the upstream job ended in a way the condition accepts. */
  | 'met'
  /** The upstream job has not ended yet. */
  | 'waiting'
  /** The upstream job ended in a way the condition refuses: the dependent can never start. */
  | 'impossible';

/**
 * What the upstream job's state means for one dependency. The end-of-job trigger
 * (libs/persistence, AddJobDependencies) applies the same table in SQL; an integration spec checks
 * that it agrees with this function on every condition and state.
 */
export function dependencyStatus(condition: DependencyCondition, upstream: JobState): DependencyStatus {
  if (!isTerminal(upstream)) return 'waiting';
  if (condition === 'finished' || upstream === 'SUCCEEDED') return 'met';
  return 'impossible';
}

export interface DependencyRequest {
  jobId: string;
  condition: DependencyCondition;
}

export interface UpstreamJob {
  id: string;
  owner: string;
  state: JobState;
}

export type DependencyAdmission =
  /** Create the job, waiting for `pending` dependencies (0: it may be placed at once). */
  | { ok: true; pending: number }
  /** Refused (422), naming the dependency at `index`. */
  | { ok: false; index: number; reason: 'NOT_VISIBLE' | 'IMPOSSIBLE'; message: string };

/**
 * Whether a job with these dependencies may be created, given the upstream jobs as they are now
 * (locked, so none can end meanwhile). A dependency on a job the caller cannot see is refused as
 * if the job did not exist (others' jobs are invisible, not forbidden); one that can already never
 * be met is refused too, rather than creating a job that is born FAILED.
 */
export function admitDependencies(
  requests: readonly DependencyRequest[],
  upstream: ReadonlyMap<string, UpstreamJob>,
  caller: { owner: string; operator: boolean },
): DependencyAdmission {
  let pending = 0;
  for (const [index, r] of requests.entries()) {
    const job = upstream.get(r.jobId.toLowerCase());
    if (!job || (!caller.operator && job.owner !== caller.owner)) {
      return { ok: false, index, reason: 'NOT_VISIBLE', message: `job ${r.jobId} not found` };
    }
    const status = dependencyStatus(r.condition, job.state);
    if (status === 'impossible') {
      return { ok: false, index, reason: 'IMPOSSIBLE', message: `job ${r.jobId} ended ${job.state}; condition ${r.condition} can never be met` };
    }
    if (status === 'waiting') pending++;
  }
  return { ok: true, pending };
}
