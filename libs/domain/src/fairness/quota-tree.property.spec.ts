import fc from 'fast-check';
import { QueueLimitSpec, checkQueueTree, cohortHeld, judgeQuota, queueLimits } from './quota-tree';

/** A random valid tree: up to 3 roots, each with up to 4 children, random guarantees and borrowing limits. */
const trees = fc
  .array(
    fc.record({
      quota: fc.option(fc.integer({ min: 0, max: 16 })),
      children: fc.array(fc.record({ quota: fc.option(fc.integer({ min: 0, max: 16 })), borrow: fc.integer({ min: 0, max: 16 }) }), { maxLength: 4 }),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .map((roots) =>
    roots.flatMap((r, i): QueueLimitSpec[] => [
      { name: `r${i}`, parent: null, quotaGpus: r.quota, borrowingLimitGpus: 0 },
      ...r.children.map((c, j) => ({ name: `r${i}c${j}`, parent: `r${i}`, quotaGpus: c.quota, borrowingLimitGpus: c.borrow })),
    ]),
  );

describe('quota tree properties', () => {
  it('admitting job after job from nothing never takes a queue past its cap or a cohort past its guarantee', () => {
    fc.assert(
      fc.property(trees, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 8 })), { maxLength: 60 }), (tree, asks) => {
        expect(checkQueueTree(tree)).toBeNull();
        const limits = queueLimits(tree);
        const held = new Map<string, number>();
        for (const [pick, gpus] of asks) {
          const queue = tree[pick % tree.length].name;
          if (judgeQuota(limits, held, queue, gpus) === 'ADMIT') held.set(queue, (held.get(queue) ?? 0) + gpus);
        }
        for (const [queue, cap] of limits.cap) expect(held.get(queue) ?? 0).toBeLessThanOrEqual(cap);
        for (const [cohort, cap] of limits.cohortCap) expect(cohortHeld(limits, held, cohort)).toBeLessThanOrEqual(cap);
      }),
    );
  });

  it('a member below its guarantee is refused only while a sibling holds more than its own guarantee (borrowed capacity to reclaim)', () => {
    fc.assert(
      fc.property(trees, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 8 })), { maxLength: 60 }), fc.nat(), (tree, asks, who) => {
        const limits = queueLimits(tree);
        const held = new Map<string, number>();
        for (const [pick, gpus] of asks) {
          const queue = tree[pick % tree.length].name;
          if (judgeQuota(limits, held, queue, gpus) === 'ADMIT') held.set(queue, (held.get(queue) ?? 0) + gpus);
        }
        const members = [...limits.guarantee.keys()];
        if (members.length === 0) return;
        const lender = members[who % members.length];
        const room = limits.guarantee.get(lender)! - (held.get(lender) ?? 0);
        if (room <= 0 || judgeQuota(limits, held, lender, room) !== 'COHORT_LIMIT') return;
        const cohort = limits.cohortOf.get(lender)!;
        const borrowed = members.filter((m) => limits.cohortOf.get(m) === cohort && (held.get(m) ?? 0) > limits.guarantee.get(m)!);
        expect(borrowed.length).toBeGreaterThan(0);
      }),
    );
  });

  it('finds every cycle it is given', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 6 }), (n) => {
        const ring = Array.from({ length: n }, (_, i): QueueLimitSpec => ({
          name: `q${i}`,
          parent: `q${(i + 1) % n}`,
          quotaGpus: null,
          borrowingLimitGpus: 0,
        }));
        expect(checkQueueTree(ring)?.code).toBe('CYCLE');
      }),
    );
  });
});
