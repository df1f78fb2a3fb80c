import fc from 'fast-check';
import { QueueLimitSpec, cohortHeld, judgeQuota, queueLimits } from './quota-tree';
import { BorrowingAttempt, chooseReclaimVictims } from './reclaim';

// a and b guarantee 4 each and may borrow 4; c guarantees 0 and borrows 8; the cohort holds 8.
const tree: QueueLimitSpec[] = [
  { name: 'org', parent: null, quotaGpus: null, borrowingLimitGpus: 0 },
  { name: 'a', parent: 'org', quotaGpus: 4, borrowingLimitGpus: 4 },
  { name: 'b', parent: 'org', quotaGpus: 4, borrowingLimitGpus: 4 },
  { name: 'c', parent: 'org', quotaGpus: 0, borrowingLimitGpus: 8 },
  { name: 'solo', parent: null, quotaGpus: 8, borrowingLimitGpus: 0 },
];
const limits = queueLimits(tree);
const run = (jobId: string, queue: string, gpus: number, placedAt: number): BorrowingAttempt => ({ jobId, queue, gpus, placedAt });
const heldOf = (attempts: BorrowingAttempt[]) => attempts.reduce((m, a) => m.set(a.queue, (m.get(a.queue) ?? 0) + a.gpus), new Map<string, number>());

describe('chooseReclaimVictims', () => {
  it.each<[string, BorrowingAttempt[], { queue: string; gpus: number }, string[] | null]>([
    [
      "b borrows 4 of a's guarantee: its newest borrowed work goes, newest first",
      [run('b1', 'b', 2, 1), run('b2', 'b', 2, 2), run('b3', 'b', 2, 3), run('b4', 'b', 2, 4)],
      { queue: 'a', gpus: 2 },
      ['b4'],
    ],
    ['a needs all 4 back', [run('b1', 'b', 2, 1), run('b2', 'b', 2, 2), run('b3', 'b', 2, 3), run('b4', 'b', 2, 4)], { queue: 'a', gpus: 4 }, ['b4', 'b3']],
    [
      "never below a borrower's guarantee: b at 4 lends nothing, c's borrowed work goes",
      [run('b1', 'b', 4, 9), run('c1', 'c', 2, 1), run('c2', 'c', 2, 2)],
      { queue: 'a', gpus: 4 },
      ['c2', 'c1'],
    ],
    ["a job past the lender's own guarantee reclaims nothing", [run('b1', 'b', 8, 1)], { queue: 'a', gpus: 5 }, null],
    ['nothing to reclaim when the cohort has room', [run('b1', 'b', 2, 1)], { queue: 'a', gpus: 4 }, null],
    ['a queue outside any cohort reclaims nothing', [run('s1', 'solo', 8, 1)], { queue: 'solo', gpus: 1 }, null],
    ["the lender's own work is never a victim", [run('a1', 'a', 2, 5), run('b1', 'b', 6, 1)], { queue: 'a', gpus: 2 }, ['b1']],
  ])('%s', (_name, running, ask, victims) => {
    expect(chooseReclaimVictims(limits, heldOf(running), ask, running)).toEqual(victims);
  });

  it("property: the victims make the lender's job fit its cohort, each was borrowed work, and none is superfluous", () => {
    const attempt = fc.record({ queue: fc.constantFrom('a', 'b', 'c'), gpus: fc.integer({ min: 1, max: 4 }), placedAt: fc.nat(1000) });
    fc.assert(
      fc.property(fc.array(attempt, { maxLength: 12 }), fc.constantFrom('a', 'b', 'c'), fc.integer({ min: 1, max: 4 }), (raw, queue, gpus) => {
        const running = raw.map((r, i) => ({ ...r, jobId: `j${i}` }));
        const held = heldOf(running);
        const victims = chooseReclaimVictims(limits, held, { queue, gpus }, running);
        if (victims === null) return;
        const after = heldOf(running.filter((r) => !victims.includes(r.jobId)));
        expect(judgeQuota(limits, after, queue, gpus)).not.toBe('COHORT_LIMIT');
        expect(victims.every((v) => running.find((r) => r.jobId === v)!.queue !== queue)).toBe(true);
        // Taken in order, each victim's queue was above its guarantee when it was taken.
        const walk = new Map(held);
        for (const v of victims) {
          const r = running.find((x) => x.jobId === v)!;
          expect(walk.get(r.queue)!).toBeGreaterThan(limits.guarantee.get(r.queue)!);
          walk.set(r.queue, walk.get(r.queue)! - r.gpus);
        }
        // Minimal in its order: without the last victim the job would not fit.
        const short = heldOf(running.filter((r) => !victims.slice(0, -1).includes(r.jobId)));
        expect(cohortHeld(limits, short, 'org') + gpus).toBeGreaterThan(limits.cohortCap.get('org')!);
      }),
    );
  });
});
