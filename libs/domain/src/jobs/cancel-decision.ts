import { JobState, isTerminal } from './job-state';

export type CancelDecision =
  /** Already ended: success, nothing changes (200). */
  | { kind: 'already-terminal' }
  /** Never dispatched: cancelled at once, no agent involved. */
  | { kind: 'cancel-now' }
  /** Dispatched: record the intent and tell the node(s) to stop; the agent reports CANCELLED. */
  | { kind: 'request-kill' }
  /** Intent already recorded: a repeat is harmless and changes nothing. */
  | { kind: 'already-requested' };

export function decideCancel(state: JobState, cancelRequested: boolean): CancelDecision {
  if (isTerminal(state)) return { kind: 'already-terminal' };
  if (state === 'QUEUED') return { kind: 'cancel-now' };
  return cancelRequested ? { kind: 'already-requested' } : { kind: 'request-kill' };
}
