import { JobState } from './job-state';

/** What an agent says about its rank of an attempt (contract: job-reports.v1 `state`). */
export type RankState = 'SCHEDULED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED';

/**
 * The job state implied by the states of all ranks of its current attempt.
 * A gang succeeds when every rank succeeds and fails as a whole when one rank fails.
 */
export function attemptOutcome(ranks: readonly RankState[]): JobState {
  if (ranks.length === 0) return 'SCHEDULED';
  if (ranks.includes('FAILED')) return 'FAILED';
  if (ranks.includes('CANCELLED')) return 'CANCELLED';
  if (ranks.every((r) => r === 'SUCCEEDED')) return 'SUCCEEDED';
  if (ranks.some((r) => r === 'RUNNING' || r === 'SUCCEEDED')) return 'RUNNING';
  return 'SCHEDULED';
}

export function isRankFinished(state: RankState): boolean {
  return state === 'SUCCEEDED' || state === 'FAILED' || state === 'CANCELLED';
}
