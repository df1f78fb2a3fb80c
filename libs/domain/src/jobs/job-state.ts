/** The states a job moves through; docs/jobs.md says what each means. */
export const JOB_STATES = ['QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const TERMINAL_STATES: ReadonlySet<JobState> = new Set<JobState>(['SUCCEEDED', 'FAILED', 'CANCELLED']);

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.has(state);
}
