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

  it.each<[string, Parameters<typeof decideAttemptLoss>[0], number, 'lost' | 'drained', string]>([
    ['a drained attempt is requeued with no retries at all', { state: 'RUNNING', attempt: 1, maxRetries: 0 }, 1, 'drained', 'requeue'],
    ['a drained attempt is requeued with its retries used up', { state: 'RUNNING', attempt: 4, maxRetries: 1 }, 4, 'drained', 'requeue'],
    ['a drained attempt already superseded is ignored', { state: 'RUNNING', attempt: 2, maxRetries: 0 }, 1, 'drained', 'ignore'],
    [
      'a forgiven (drained) attempt does not count: attempt 2 after a drain still has its one retry',
      { state: 'RUNNING', attempt: 2, maxRetries: 1, retriesForgiven: 1 },
      2,
      'lost',
      'requeue',
    ],
    ['without the forgiveness it would have used it', { state: 'RUNNING', attempt: 3, maxRetries: 1, retriesForgiven: 1 }, 3, 'lost', 'fail'],
  ])('%s', (_n, job, lost, cause, expected) => {
    expect(decideAttemptLoss(job, lost, cause).kind).toBe(expected);
  });

  it.each(JOB_STATES.filter((s) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(s)))('a %s job ignores losses', (state) => {
    expect(decideAttemptLoss({ state, attempt: 1, maxRetries: 3 }, 1).kind).toBe('ignore');
  });
});
