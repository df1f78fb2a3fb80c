import { JobState, isTerminal } from '../jobs/job-state';

export interface LossSubject {
  state: JobState;
  attempt: number;
  maxRetries: number;
  /** Attempts ended by the control plane's own choice (drain), which used no retry. */
  retriesForgiven?: number;
}

/** Why an attempt was taken away: its node was lost, or an operator drained its node. */
export type LossCause = 'lost' | 'drained';

export type LossDecision =
  /** Placed again later: back to QUEUED; the next placement makes it attempt + 1. */
  | { kind: 'requeue' }
  /** No retries left. */
  | { kind: 'fail' }
  /** Already ended, or the lost attempt is not the current one: nothing to do. */
  | { kind: 'ignore' };

/** Retries attempt n of the job has used: every attempt before it, less those forgiven. */
export function retriesUsed(job: Pick<LossSubject, 'attempt' | 'retriesForgiven'>): number {
  return job.attempt - 1 - (job.retriesForgiven ?? 0);
}

/**
 * What losing an attempt (its node died, or it vanished from the node) does to the job: placed
 * again while retries remain (retriesUsed < maxRetries), else it fails. An attempt ended by a drain
 * is the operator's doing, not the job's: always placed again, and it uses no retry (the caller
 * counts it as forgiven).
 */
export function decideAttemptLoss(job: LossSubject, lostAttempt: number, cause: LossCause = 'lost'): LossDecision {
  if (isTerminal(job.state) || job.attempt !== lostAttempt) return { kind: 'ignore' };
  if (job.state !== 'SCHEDULED' && job.state !== 'RUNNING') return { kind: 'ignore' };
  if (cause === 'drained') return { kind: 'requeue' };
  return retriesUsed(job) < job.maxRetries ? { kind: 'requeue' } : { kind: 'fail' };
}
