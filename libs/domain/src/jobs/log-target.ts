import { JobState } from './job-state';

/** Which log `GET /v1/jobs/{id}/logs` reads: one rank of one attempt (contract 4.4). */
export type LogTarget =
  | { kind: 'read'; attempt: number; rank: number }
  /** Nothing to read yet: the job has never been placed. */
  | { kind: 'not-started' }
  /** A parameter names what this job cannot have. */
  | { kind: 'invalid'; field: 'attempt' | 'rank'; message: string };

/**
 * The attempt and rank a log request reads: by default the job's latest attempt and rank 0. An
 * attempt after the latest, or a rank past the job's `nodes`, is a bad parameter (not a missing
 * log): the job itself says they cannot exist.
 */
export function chooseLogTarget(job: { attempt: number; nodes: number }, want: { attempt?: number; rank?: number }): LogTarget {
  if (want.attempt !== undefined && (want.attempt < 1 || want.attempt > Math.max(job.attempt, 1))) {
    return { kind: 'invalid', field: 'attempt', message: job.attempt === 0 ? 'the job has no attempt yet' : `this job's attempts are 1..${job.attempt}` };
  }
  if (want.rank !== undefined && (want.rank < 0 || want.rank >= job.nodes)) {
    return { kind: 'invalid', field: 'rank', message: `this job's ranks are 0..${job.nodes - 1}` };
  }
  if (job.attempt === 0) return { kind: 'not-started' };
  return { kind: 'read', attempt: want.attempt ?? job.attempt, rank: want.rank ?? 0 };
}

/**
 * Whether a follow of `attempt` can still receive anything: only while it is the job's current
 * attempt and placed (SCHEDULED or RUNNING); not once it was lost (QUEUED again), ended, or followed by another. The gateway ends a follow shortly after this turns false even if the agent
 * never says so (its node died, its connection hangs).
 */
export function logAttemptLive(job: { attempt: number; state: JobState }, attempt: number): boolean {
  return job.attempt === attempt && (job.state === 'SCHEDULED' || job.state === 'RUNNING');
}
