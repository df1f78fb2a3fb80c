import { JOB_STATES, JobState } from './job-state';
import { DependencyCondition, DependencyRequest, UpstreamJob, admitDependencies, dependencyStatus } from './job-dependencies';

describe('dependencyStatus', () => {
  it.each<[DependencyCondition, JobState, string]>([
    ['succeeded', 'QUEUED', 'waiting'],
    ['succeeded', 'SCHEDULED', 'waiting'],
    ['succeeded', 'RUNNING', 'waiting'],
    ['succeeded', 'SUCCEEDED', 'met'],
    ['succeeded', 'FAILED', 'impossible'],
    ['succeeded', 'CANCELLED', 'impossible'],
    ['finished', 'QUEUED', 'waiting'],
    ['finished', 'SCHEDULED', 'waiting'],
    ['finished', 'RUNNING', 'waiting'],
    ['finished', 'SUCCEEDED', 'met'],
    ['finished', 'FAILED', 'met'],
    ['finished', 'CANCELLED', 'met'],
  ])('%s on a %s job: %s', (condition, state, expected) => {
    expect(dependencyStatus(condition, state)).toBe(expected);
  });

  it('covers every state', () => {
    expect(new Set(JOB_STATES)).toEqual(new Set(['QUEUED', 'SCHEDULED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED']));
  });
});

describe('admitDependencies', () => {
  const a: UpstreamJob = { id: 'a', owner: 'alice', state: 'RUNNING' };
  const done: UpstreamJob = { id: 'done', owner: 'alice', state: 'SUCCEEDED' };
  const failed: UpstreamJob = { id: 'failed', owner: 'alice', state: 'FAILED' };
  const bobs: UpstreamJob = { id: 'bobs', owner: 'bob', state: 'RUNNING' };
  const found = new Map([a, done, failed, bobs].map((j) => [j.id, j]));
  const alice = { owner: 'alice', operator: false };
  const dep = (jobId: string, condition: DependencyCondition = 'succeeded'): DependencyRequest => ({ jobId, condition });

  it.each<[string, DependencyRequest[], { owner: string; operator: boolean }, object]>([
    ['no dependencies: nothing to wait for', [], alice, { ok: true, pending: 0 }],
    ['a running job: one to wait for', [dep('a')], alice, { ok: true, pending: 1 }],
    ['a job that already succeeded is met at once', [dep('done'), dep('a', 'finished')], alice, { ok: true, pending: 1 }],
    ['a failed job with finished is met', [dep('failed', 'finished')], alice, { ok: true, pending: 0 }],
    ['a failed job with succeeded can never be met: refused', [dep('a'), dep('failed')], alice, { ok: false, index: 1, reason: 'IMPOSSIBLE' }],
    ["another owner's job is invisible to a user", [dep('bobs')], alice, { ok: false, index: 0, reason: 'NOT_VISIBLE' }],
    ["an operator may name anyone's job", [dep('bobs')], { owner: 'ops', operator: true }, { ok: true, pending: 1 }],
    ['a job that does not exist', [dep('a'), dep('nope')], alice, { ok: false, index: 1, reason: 'NOT_VISIBLE' }],
    ['ids are matched whatever their case', [dep('A')], alice, { ok: true, pending: 1 }],
  ])('%s', (_n, requests, caller, expected) => {
    expect(admitDependencies(requests, found, caller)).toMatchObject(expected);
  });
});
