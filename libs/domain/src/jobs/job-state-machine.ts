import { JobState, isTerminal } from './job-state';

/**
 * The one definition of which job state changes are legal (contract §2).
 * Every writer (API, scheduler, reconciler) asks this before it commits.
 */
const ALLOWED: Readonly<Record<JobState, readonly JobState[]>> = {
  QUEUED: ['SCHEDULED', 'CANCELLED'],
  SCHEDULED: ['RUNNING', 'CANCELLED', 'FAILED', 'QUEUED'],
  RUNNING: ['SUCCEEDED', 'CANCELLED', 'FAILED', 'QUEUED'],
  SUCCEEDED: [],
  FAILED: [],
  CANCELLED: [],
};

export type TransitionDecision =
  /** Commit the change and record one STATE_CHANGED event. */
  | { kind: 'apply'; from: JobState; to: JobState }
  /** The job already holds that state: accepted, nothing written. */
  | { kind: 'noop'; state: JobState }
  /** Not allowed from here: nothing changes; `reason` says why. */
  | { kind: 'reject'; from: JobState; to: JobState; reason: 'TERMINAL_STATE' | 'ILLEGAL_TRANSITION' };

export function decideTransition(from: JobState, to: JobState): TransitionDecision {
  if (from === to) return { kind: 'noop', state: from };
  if (isTerminal(from)) return { kind: 'reject', from, to, reason: 'TERMINAL_STATE' };
  if (!ALLOWED[from].includes(to)) return { kind: 'reject', from, to, reason: 'ILLEGAL_TRANSITION' };
  return { kind: 'apply', from, to };
}

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: JobState,
    readonly to: JobState,
    readonly reason: string,
  ) {
    super(`job cannot go ${from} -> ${to}: ${reason}`);
    this.name = 'IllegalTransitionError';
  }
}

/** For write paths that have already decided on a change: refuses anything the machine does not allow. */
export function assertTransition(from: JobState, to: JobState): void {
  const d = decideTransition(from, to);
  if (d.kind !== 'apply') throw new IllegalTransitionError(from, to, d.kind === 'reject' ? d.reason : 'no change');
}

export function canTransition(from: JobState, to: JobState): boolean {
  return decideTransition(from, to).kind === 'apply';
}

/**
 * The shortest legal path from `from` to `to`, for a report that skipped a step
 * (a job that ends before its RUNNING report is applied still passes through RUNNING,
 * so every state change stays one event). Empty when already there; null when no path.
 */
export function transitionPath(from: JobState, to: JobState): JobState[] | null {
  if (from === to) return [];
  if (canTransition(from, to)) return [to];
  if (from === 'SCHEDULED' && to === 'SUCCEEDED') return ['RUNNING', 'SUCCEEDED'];
  return null;
}
