import { JOB_STATES, JobState } from '../jobs/job-state';
import { decideAttemptLoss } from './attempt-loss';

describe('decideAttemptLoss', () => {
  it.each<[JobState, number, number, number, string]>([
    ['RUNNING', 1, 2, 1, 'requeue'],
    ['SCHEDULED', 1, 1, 1, 'requeue'],
    ['RUNNING', 2, 2, 2, 'requeue'],
    ['RUNNING', 3, 2, 3, 'fail'],
    ['RUNNING', 1, 0, 1, 'fail'],
    ['RUNNING', 2, 5, 1, 'ignore'], // an older attempt: already superseded
    ['QUEUED', 1, 2, 1, 'ignore'], // already requeued
  ])('%s attempt %i, maxRetries %i, lost attempt %i -> %s', (state, attempt, maxRetries, lost, expected) => {
    expect(decideAttemptLoss({ state, attempt, maxRetries }, lost).kind).toBe(expected);
  });

  it.each(JOB_STATES.filter((s) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(s)))('a %s job ignores losses', (state) => {
    expect(decideAttemptLoss({ state, attempt: 1, maxRetries: 3 }, 1).kind).toBe('ignore');
  });
});
