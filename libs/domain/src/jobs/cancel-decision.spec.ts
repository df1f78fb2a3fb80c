import { JOB_STATES, JobState } from './job-state';
import { decideCancel } from './cancel-decision';

const expected: Record<JobState, [string, string]> = {
  QUEUED: ['cancel-now', 'cancel-now'],
  SCHEDULED: ['request-kill', 'already-requested'],
  RUNNING: ['request-kill', 'already-requested'],
  SUCCEEDED: ['already-terminal', 'already-terminal'],
  FAILED: ['already-terminal', 'already-terminal'],
  CANCELLED: ['already-terminal', 'already-terminal'],
};

describe('decideCancel', () => {
  it.each(
    JOB_STATES.flatMap(
      (s) =>
        [
          [s, false],
          [s, true],
        ] as Array<[JobState, boolean]>,
    ),
  )('%s, requested before: %s', (state, requested) => {
    expect(decideCancel(state, requested).kind).toBe(expected[state][requested ? 1 : 0]);
  });
});
