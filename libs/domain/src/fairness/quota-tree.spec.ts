import { QueueLimitSpec, checkQueueTree, cohortHeld, describeQueueTreeProblem, judgeQuota, placementFence, queueLimits } from './quota-tree';

const q = (name: string, parent: string | null = null, quotaGpus: number | null = null, borrowingLimitGpus = 0): QueueLimitSpec => ({
  name,
  parent,
  quotaGpus,
  borrowingLimitGpus,
});

describe('checkQueueTree', () => {
  it.each<[string, QueueLimitSpec[], string | null]>([
    ['roots only', [q('a'), q('b')], null],
    ['a parent and its children', [q('org', null, 8), q('a', 'org', 4), q('b', 'org', 4)], null],
    ['an unknown parent', [q('a', 'nope')], 'UNKNOWN_PARENT'],
    ['its own parent', [q('a', 'a')], 'SELF_PARENT'],
    ['a cycle of two', [q('a', 'b'), q('b', 'a')], 'CYCLE'],
    ['a cycle of three', [q('a', 'b'), q('b', 'c'), q('c', 'a')], 'CYCLE'],
    ['three levels', [q('org'), q('team', 'org'), q('sub', 'team')], 'TOO_DEEP'],
  ])('%s -> %s', (_name, queues, code) => {
    const problem = checkQueueTree(queues);
    expect(problem?.code ?? null).toBe(code);
    if (problem) expect(describeQueueTreeProblem(problem)).toMatch(problem.queue);
  });
});

describe('queueLimits and judgeQuota', () => {
  // org guarantees 2 of its own; a and b guarantee 4 each and may borrow 3 and 0.
  const tree = [q('org', null, 2), q('a', 'org', 4, 3), q('b', 'org', 4, 0), q('free'), q('capped', null, 5), q('lonely', 'open', null, 6), q('open')];
  const limits = queueLimits(tree);

  it('caps roots at their quota and children at guarantee + borrowing limit; a cohort at its guarantees', () => {
    expect(Object.fromEntries(limits.cap)).toEqual({ org: 2, a: 7, b: 4, capped: 5, lonely: 6 });
    expect(Object.fromEntries(limits.cohortOf)).toEqual({ org: 'org', a: 'org', b: 'org', lonely: 'open' });
    expect(Object.fromEntries(limits.cohortCap)).toEqual({ org: 10, open: 0 });
    expect(Object.fromEntries(limits.guarantee)).toEqual({ org: 2, a: 4, b: 4, lonely: 0 });
  });

  it.each<[string, Record<string, number>, string, number, string]>([
    ['an unlimited root', { free: 1000 }, 'free', 64, 'ADMIT'],
    ['a root within its quota', { capped: 3 }, 'capped', 2, 'ADMIT'],
    ['a root past its quota', { capped: 3 }, 'capped', 3, 'QUEUE_LIMIT'],
    ['a root already past a lowered quota, even for no GPUs', { capped: 6 }, 'capped', 0, 'QUEUE_LIMIT'],
    ['a child within its guarantee', {}, 'a', 4, 'ADMIT'],
    ['a child borrowing what its siblings leave', { b: 1 }, 'a', 7, 'ADMIT'],
    ['a child past guarantee + borrowing limit', {}, 'a', 8, 'QUEUE_LIMIT'],
    ['a child with no borrowing limit past its guarantee', {}, 'b', 5, 'QUEUE_LIMIT'],
    ['a child within its own limit when siblings use the cohort', { b: 4, org: 2 }, 'a', 5, 'COHORT_LIMIT'],
    ['a child within its guarantee while a sibling borrows it', { a: 7, org: 2 }, 'b', 2, 'COHORT_LIMIT'],
    ['the parent itself borrows nothing', { a: 0 }, 'org', 3, 'QUEUE_LIMIT'],
    ['a child whose parent has no quota borrows up to its limit, the cohort being its own guarantees (0)', {}, 'lonely', 1, 'COHORT_LIMIT'],
  ])('%s', (_name, held, queue, gpus, verdict) => {
    expect(judgeQuota(limits, new Map(Object.entries(held)), queue, gpus)).toBe(verdict);
  });

  it('sums a cohort and names every member the commit must fence with a queue', () => {
    expect(
      cohortHeld(
        limits,
        new Map([
          ['a', 3],
          ['b', 1],
          ['org', 2],
          ['free', 50],
        ]),
        'org',
      ),
    ).toBe(6);
    expect(placementFence(limits, ['b', 'free'])).toEqual({
      queues: [
        { queue: 'a', cap: 7, cohort: 'org' },
        { queue: 'b', cap: 4, cohort: 'org' },
        { queue: 'free', cap: null, cohort: null },
        { queue: 'org', cap: 2, cohort: 'org' },
      ],
      cohorts: [{ cohort: 'org', cap: 10 }],
    });
    expect(placementFence(limits, ['capped'])).toEqual({ queues: [{ queue: 'capped', cap: 5, cohort: null }], cohorts: [] });
  });
});
