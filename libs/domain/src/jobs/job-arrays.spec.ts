import fc from 'fast-check';
import { ArrayChildCounts, NO_CHILDREN, arrayParentPath, arrayParentState, capArrayParallelism } from './job-arrays';
import { JOB_STATES, JobState } from './job-state';
import { decideTransition } from './job-state-machine';

const counts = (c: Partial<ArrayChildCounts>): ArrayChildCounts => ({ ...NO_CHILDREN, ...c });

describe('arrayParentState', () => {
  it.each<[string, Partial<ArrayChildCounts>, JobState, boolean, JobState]>([
    ['all queued', { QUEUED: 10 }, 'QUEUED', false, 'QUEUED'],
    ['one placed', { QUEUED: 9, SCHEDULED: 1 }, 'QUEUED', false, 'RUNNING'],
    ['one running', { QUEUED: 9, RUNNING: 1 }, 'QUEUED', false, 'RUNNING'],
    ['some ended, some queued', { QUEUED: 5, SUCCEEDED: 5 }, 'QUEUED', false, 'RUNNING'],
    ['a child requeued for a retry: the parent does not go back', { QUEUED: 10 }, 'RUNNING', false, 'RUNNING'],
    ['all succeeded', { SUCCEEDED: 10 }, 'RUNNING', false, 'SUCCEEDED'],
    ['one failed, none active', { SUCCEEDED: 9, FAILED: 1 }, 'RUNNING', false, 'FAILED'],
    ['one failed, others still running', { RUNNING: 3, FAILED: 1 }, 'RUNNING', false, 'RUNNING'],
    ['a child cancelled on its own, the rest succeeded', { SUCCEEDED: 9, CANCELLED: 1 }, 'RUNNING', false, 'CANCELLED'],
    ['failed beats a lone cancelled child', { FAILED: 1, CANCELLED: 1, SUCCEEDED: 8 }, 'RUNNING', false, 'FAILED'],
    ['parent cancelled, children still stopping', { RUNNING: 2, CANCELLED: 8 }, 'RUNNING', true, 'RUNNING'],
    ['parent cancelled, every child ended', { SUCCEEDED: 3, FAILED: 1, CANCELLED: 6 }, 'RUNNING', true, 'CANCELLED'],
    ['parent cancelled before any child was placed', { CANCELLED: 10 }, 'QUEUED', true, 'CANCELLED'],
    ['a parent that ended stays ended', { QUEUED: 1 }, 'SUCCEEDED', false, 'SUCCEEDED'],
    ['no children counted (not yet visible): stays', {}, 'QUEUED', false, 'QUEUED'],
  ])('%s', (_, c, state, cancelRequested, expected) => {
    expect(arrayParentState(counts(c), { state, cancelRequested })).toBe(expected);
  });

  it('moves only forward, along the job state machine but for QUEUED -> RUNNING (never SCHEDULED), whatever the children do', () => {
    const count = fc.nat({ max: 5 });
    const history = fc.array(fc.record({ QUEUED: count, SCHEDULED: count, RUNNING: count, SUCCEEDED: count, FAILED: count, CANCELLED: count }), {
      minLength: 1,
      maxLength: 20,
    });
    fc.assert(
      fc.property(history, fc.boolean(), (steps, cancelRequested) => {
        let state: JobState = 'QUEUED';
        for (const c of steps) {
          const next = arrayParentState(c, { state, cancelRequested });
          for (const step of arrayParentPath(state, next)) {
            const ok = step !== 'SCHEDULED' && ((state === 'QUEUED' && step === 'RUNNING') || decideTransition(state, step).kind === 'apply');
            if (!ok) return false;
            state = step;
          }
          if (state !== next) return false;
        }
        return true;
      }),
    );
  });

  it.each<[JobState, JobState, JobState[]]>([
    ['QUEUED', 'RUNNING', ['RUNNING']],
    ['QUEUED', 'SUCCEEDED', ['RUNNING', 'SUCCEEDED']],
    ['QUEUED', 'FAILED', ['RUNNING', 'FAILED']],
    ['QUEUED', 'CANCELLED', ['CANCELLED']],
    ['RUNNING', 'FAILED', ['FAILED']],
    ['RUNNING', 'RUNNING', []],
  ])('arrayParentPath %s -> %s', (from, to, path) => {
    expect(arrayParentPath(from, to)).toEqual(path);
  });

  it('every state it returns is a job state', () => {
    expect(JOB_STATES).toContain(arrayParentState(counts({ RUNNING: 1 }), { state: 'QUEUED', cancelRequested: false }));
  });
});

describe('capArrayParallelism', () => {
  const job = (id: string, arrayOf: string | null, arrayParallelism: number | null) => ({ id, arrayOf, arrayParallelism });

  it.each<[string, ReturnType<typeof job>[], Record<string, number>, string[], string[]]>([
    ['jobs outside arrays pass', [job('a', null, null), job('b', null, null)], {}, ['a', 'b'], []],
    ['an array without a cap passes', [job('a', 'p', null), job('b', 'p', null)], {}, ['a', 'b'], []],
    ['room for two of three', [job('a', 'p', 2), job('b', 'p', 2), job('c', 'p', 2)], {}, ['a', 'b'], ['c']],
    ['room left by those already placed', [job('a', 'p', 3), job('b', 'p', 3)], { p: 2 }, ['a'], ['b']],
    ['an array at its cap places none', [job('a', 'p', 2), job('x', null, null)], { p: 2 }, ['x'], ['a']],
    ['over its cap (a second replica placed meanwhile): none, not a negative room', [job('a', 'p', 2)], { p: 5 }, [], ['a']],
    ['each array its own room', [job('a', 'p', 1), job('b', 'q', 1), job('c', 'p', 1), job('d', 'q', 1)], {}, ['a', 'b'], ['c', 'd']],
  ])('%s', (_, candidates, active, admitted, held) => {
    const cut = capArrayParallelism(candidates, new Map(Object.entries(active)));
    expect(cut.admitted.map((c) => c.id)).toEqual(admitted);
    expect(cut.held).toEqual(held.map((jobId) => ({ jobId, reason: 'ARRAY_PARALLELISM' })));
  });

  it('never admits more of an array than its parallelism less those active', () => {
    const arb = fc.record({
      parallelism: fc.integer({ min: 1, max: 20 }),
      active: fc.nat({ max: 25 }),
      queued: fc.nat({ max: 60 }),
    });
    fc.assert(
      fc.property(arb, ({ parallelism, active, queued }) => {
        const candidates = Array.from({ length: queued }, (_, i) => job(`c${i}`, 'p', parallelism));
        const cut = capArrayParallelism(candidates, new Map([['p', active]]));
        return (
          active + cut.admitted.length <= Math.max(parallelism, active) &&
          cut.admitted.length + cut.held.length === queued &&
          cut.admitted.length === Math.min(queued, Math.max(0, parallelism - active))
        );
      }),
    );
  });
});
