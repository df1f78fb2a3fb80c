import { attemptOutcome, RankState } from './attempt-outcome';
import { JobState } from './job-state';
import { decideReport, RankSnapshot } from './job-report-decision';

const one = (state: RankState): RankSnapshot[] => [{ nodeId: 'n1', state }];

describe('attemptOutcome', () => {
  it.each<[RankState[], JobState]>([
    [[], 'SCHEDULED'],
    [['SCHEDULED'], 'SCHEDULED'],
    [['RUNNING'], 'RUNNING'],
    [['SUCCEEDED'], 'SUCCEEDED'],
    [['FAILED'], 'FAILED'],
    [['CANCELLED'], 'CANCELLED'],
    [['SUCCEEDED', 'RUNNING'], 'RUNNING'],
    [['SUCCEEDED', 'SCHEDULED'], 'RUNNING'],
    [['SUCCEEDED', 'SUCCEEDED'], 'SUCCEEDED'],
    [['SUCCEEDED', 'FAILED'], 'FAILED'],
    [['RUNNING', 'CANCELLED'], 'CANCELLED'],
    [['FAILED', 'CANCELLED'], 'FAILED'],
  ])('%j -> %s', (ranks, expected) => expect(attemptOutcome(ranks)).toBe(expected));
});

describe('decideReport', () => {
  it.each<[string, JobState, RankState, 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED', object]>([
    ['first RUNNING', 'SCHEDULED', 'SCHEDULED', 'RUNNING', { kind: 'apply', path: ['RUNNING'], releaseRank: false }],
    ['repeated RUNNING', 'RUNNING', 'RUNNING', 'RUNNING', { kind: 'apply', path: [], releaseRank: false }],
    ['success', 'RUNNING', 'RUNNING', 'SUCCEEDED', { kind: 'apply', path: ['SUCCEEDED'], releaseRank: true }],
    ['success before RUNNING was seen', 'SCHEDULED', 'SCHEDULED', 'SUCCEEDED', { kind: 'apply', path: ['RUNNING', 'SUCCEEDED'] }],
    ['failure', 'RUNNING', 'RUNNING', 'FAILED', { kind: 'apply', path: ['FAILED'], releaseRank: true }],
    ['failure from SCHEDULED', 'SCHEDULED', 'SCHEDULED', 'FAILED', { kind: 'apply', path: ['FAILED'] }],
    ['cancelled', 'RUNNING', 'RUNNING', 'CANCELLED', { kind: 'apply', path: ['CANCELLED'], releaseRank: true }],
    ['repeated SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', { kind: 'apply', path: [], releaseRank: false }],
    ['RUNNING after SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'RUNNING', { kind: 'rejected', reason: 'TERMINAL_STATE' }],
    ['FAILED after SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'FAILED', { kind: 'rejected', reason: 'TERMINAL_STATE' }],
    ['FAILED after SUCCEEDED on the same rank', 'RUNNING', 'SUCCEEDED', 'FAILED', { kind: 'rejected', reason: 'ILLEGAL_TRANSITION' }],
    ['rank ends after the job was cancelled', 'CANCELLED', 'RUNNING', 'CANCELLED', { kind: 'apply', path: [], releaseRank: true }],
    ['RUNNING on a cancelled job', 'CANCELLED', 'RUNNING', 'RUNNING', { kind: 'rejected', reason: 'TERMINAL_STATE' }],
  ])('%s', (_name, jobState, rankState, reportState, expected) => {
    const decision = decideReport({ state: jobState, attempt: 1 }, one(rankState), { nodeId: 'n1', attempt: 1, state: reportState });
    expect(decision).toMatchObject(expected);
  });

  it.each<['RUNNING' | 'SUCCEEDED', boolean]>([
    ['RUNNING', true],
    ['SUCCEEDED', false],
  ])('a %s report for an old attempt is stale (kill: %s)', (state, kill) => {
    expect(decideReport({ state: 'RUNNING', attempt: 2 }, one('RUNNING'), { nodeId: 'n1', attempt: 1, state })).toEqual({
      kind: 'stale',
      killAttempt: kill,
    });
  });

  it.each(['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const)(
    'a %s report of the current attempt from a node without a rank is foreign (a forgery: nothing changes)',
    (state) => {
      expect(decideReport({ state: 'RUNNING', attempt: 1 }, one('RUNNING'), { nodeId: 'n9', attempt: 1, state })).toEqual({ kind: 'foreign' });
    },
  );

  it('a report of an old attempt from a node without a rank is stale', () => {
    expect(decideReport({ state: 'RUNNING', attempt: 2 }, one('RUNNING'), { nodeId: 'n9', attempt: 1, state: 'RUNNING' }).kind).toBe('stale');
  });

  it('one failing rank fails the gang and kills the live ranks', () => {
    const ranks: RankSnapshot[] = [
      { nodeId: 'n1', state: 'RUNNING' },
      { nodeId: 'n2', state: 'RUNNING' },
      { nodeId: 'n3', state: 'SUCCEEDED' },
    ];
    expect(decideReport({ state: 'RUNNING', attempt: 1 }, ranks, { nodeId: 'n1', attempt: 1, state: 'FAILED' })).toEqual({
      kind: 'apply',
      rankState: 'FAILED',
      releaseRank: true,
      path: ['FAILED'],
      killNodeIds: ['n2'],
    });
  });

  it('a gang succeeds only when the last rank succeeds', () => {
    const ranks: RankSnapshot[] = [
      { nodeId: 'n1', state: 'RUNNING' },
      { nodeId: 'n2', state: 'SUCCEEDED' },
    ];
    const d = decideReport({ state: 'RUNNING', attempt: 1 }, ranks, { nodeId: 'n1', attempt: 1, state: 'SUCCEEDED' });
    expect(d).toMatchObject({ kind: 'apply', path: ['SUCCEEDED'], killNodeIds: [] });
  });
});

describe('reports for an attempt the control plane has taken away', () => {
  it('are stale: a RUNNING one is answered with KILL, nothing changes', () => {
    const lostRank: RankSnapshot[] = [{ nodeId: 'n1', state: 'RUNNING', released: true }];
    expect(decideReport({ state: 'QUEUED', attempt: 1 }, lostRank, { nodeId: 'n1', attempt: 1, state: 'RUNNING' })).toEqual({
      kind: 'stale',
      killAttempt: true,
    });
    expect(decideReport({ state: 'QUEUED', attempt: 1 }, lostRank, { nodeId: 'n1', attempt: 1, state: 'SUCCEEDED' })).toEqual({
      kind: 'stale',
      killAttempt: false,
    });
  });

  it('a finished and released rank repeating its end is still accepted', () => {
    const done: RankSnapshot[] = [{ nodeId: 'n1', state: 'SUCCEEDED', released: true }];
    expect(decideReport({ state: 'SUCCEEDED', attempt: 1 }, done, { nodeId: 'n1', attempt: 1, state: 'SUCCEEDED' }).kind).toBe('apply');
  });
});
