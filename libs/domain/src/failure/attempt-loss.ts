import { JobState, isTerminal } from '../jobs/job-state';

export interface LossSubject {
  state: JobState;
  attempt: number;
  maxRetries: number;
}

export type LossDecision =
  /** Placed again later: back to QUEUED; the next placement makes it attempt + 1. */
  | { kind: 'requeue' }
  /** No retries left. */
  | { kind: 'fail' }
  /** Already ended, or the lost attempt is not the current one: nothing to do. */
  | { kind: 'ignore' };

/**
 * What losing an attempt (its node died, or it vanished from the node) does to the job.
 * `maxRetries` counts re-placements after lost attempts: attempt n has used n - 1 of them.
 */
export function decideAttemptLoss(job: LossSubject, lostAttempt: number): LossDecision {
  if (isTerminal(job.state) || job.attempt !== lostAttempt) return { kind: 'ignore' };
  if (job.state !== 'SCHEDULED' && job.state !== 'RUNNING') return { kind: 'ignore' };
  return job.attempt - 1 < job.maxRetries ? { kind: 'requeue' } : { kind: 'fail' };
}
