import { JobState } from './job-state';
import { LogTarget, chooseLogTarget, logAttemptLive } from './log-target';

describe('chooseLogTarget', () => {
  it.each<[string, { attempt: number; nodes: number }, { attempt?: number; rank?: number }, LogTarget]>([
    ['the latest attempt, rank 0 by default', { attempt: 3, nodes: 2 }, {}, { kind: 'read', attempt: 3, rank: 0 }],
    ['an earlier attempt', { attempt: 3, nodes: 2 }, { attempt: 1 }, { kind: 'read', attempt: 1, rank: 0 }],
    ['the last rank of a gang', { attempt: 1, nodes: 4 }, { rank: 3 }, { kind: 'read', attempt: 1, rank: 3 }],
    ['a job never placed', { attempt: 0, nodes: 1 }, {}, { kind: 'not-started' }],
    ['attempt 1 of a job never placed', { attempt: 0, nodes: 1 }, { attempt: 1 }, { kind: 'not-started' }],
    ['an attempt after the latest', { attempt: 2, nodes: 1 }, { attempt: 3 }, { kind: 'invalid', field: 'attempt', message: "this job's attempts are 1..2" }],
    ['attempt 0', { attempt: 2, nodes: 1 }, { attempt: 0 }, { kind: 'invalid', field: 'attempt', message: "this job's attempts are 1..2" }],
    ['attempt 2 of a job never placed', { attempt: 0, nodes: 1 }, { attempt: 2 }, { kind: 'invalid', field: 'attempt', message: 'the job has no attempt yet' }],
    ['a rank past the gang', { attempt: 1, nodes: 2 }, { rank: 2 }, { kind: 'invalid', field: 'rank', message: "this job's ranks are 0..1" }],
    ['a negative rank', { attempt: 1, nodes: 2 }, { rank: -1 }, { kind: 'invalid', field: 'rank', message: "this job's ranks are 0..1" }],
  ])('%s', (_name, job, want, expected) => {
    expect(chooseLogTarget(job, want)).toEqual(expected);
  });
});

describe('logAttemptLive', () => {
  it.each<[JobState, number, number, boolean]>([
    ['RUNNING', 2, 2, true],
    ['SCHEDULED', 2, 2, true],
    ['QUEUED', 2, 2, false],
    ['RUNNING', 3, 2, false],
    ['SUCCEEDED', 2, 2, false],
    ['FAILED', 2, 2, false],
    ['CANCELLED', 2, 2, false],
  ])('a job %s at attempt %i: attempt %i live = %s', (state, current, attempt, live) => {
    expect(logAttemptLive({ attempt: current, state }, attempt)).toBe(live);
  });
});
