/**
 * Queue hierarchy and borrowing (ADR 0039, Kueue's cohorts with one level): a queue may name a
 * `parent`; the parent and its children form a cohort. A child's `quotaGpus` is its guarantee and
 * it may hold up to guarantee + `borrowingLimitGpus`, as long as the cohort together stays within
 * the cohort's guarantee (the children's guarantees and the parent's own quota, if it has one). A
 * queue without a parent keeps its quota as a hard cap (ADR 0008); a parent with no quota is not
 * limited and its own holdings are outside its cohort.
 */

/** The fields of a queue the tree and its limits are made of. */
export interface QueueLimitSpec {
  name: string;
  parent: string | null;
  /** A root's hard cap, a child's guarantee; null: a root is unlimited, a child guarantees nothing. */
  quotaGpus: number | null;
  /** GPUs a child may hold beyond its guarantee out of its siblings' unused guarantee; ignored on a root. */
  borrowingLimitGpus: number;
}

/** Roots and their children: a parent has no parent. */
export const MAX_QUEUE_DEPTH = 2;

export type QueueTreeProblem =
  | { code: 'UNKNOWN_PARENT'; queue: string; parent: string }
  | { code: 'SELF_PARENT'; queue: string }
  | { code: 'CYCLE'; queue: string }
  | { code: 'TOO_DEEP'; queue: string; parent: string };

/** A message for a problem, naming the queues. */
export function describeQueueTreeProblem(p: QueueTreeProblem): string {
  switch (p.code) {
    case 'UNKNOWN_PARENT':
      return `parent ${p.parent} of queue ${p.queue} does not exist`;
    case 'SELF_PARENT':
      return `queue ${p.queue} cannot be its own parent`;
    case 'CYCLE':
      return `queue ${p.queue} would be its own ancestor`;
    case 'TOO_DEEP':
      return `queue ${p.queue} cannot be placed under ${p.parent}: queues nest at most ${MAX_QUEUE_DEPTH} levels (a parent has no parent, a queue with children has none)`;
  }
}

/** The first problem of a set of queues as a tree, or null when it is one (unknown parents, cycles, depth). */
export function checkQueueTree(queues: readonly Pick<QueueLimitSpec, 'name' | 'parent'>[]): QueueTreeProblem | null {
  const parentOf = new Map(queues.map((q) => [q.name, q.parent]));
  for (const q of [...queues].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (q.parent === null) continue;
    if (q.parent === q.name) return { code: 'SELF_PARENT', queue: q.name };
    if (!parentOf.has(q.parent)) return { code: 'UNKNOWN_PARENT', queue: q.name, parent: q.parent };
    // Walk up to the root: a walk that comes back is a cycle; a chain longer than MAX_QUEUE_DEPTH is too deep.
    const chain = new Set([q.name]);
    for (let at: string | null = q.parent; at !== null; at = parentOf.get(at) ?? null) {
      if (chain.has(at)) return { code: 'CYCLE', queue: q.name };
      chain.add(at);
    }
    if (chain.size > MAX_QUEUE_DEPTH) return { code: 'TOO_DEEP', queue: q.name, parent: q.parent };
  }
  return null;
}

/** The limits the scheduler plans with and the placement commit enforces (libs/persistence placement-commit). */
export interface QueueLimits {
  /** Most GPUs each queue may hold; absent: no cap of its own. */
  cap: ReadonlyMap<string, number>;
  /** The cohort each queue counts in (its parent's name, or its own for a parent with a quota); absent: none. */
  cohortOf: ReadonlyMap<string, string>;
  /** Most GPUs a cohort's members may hold together: the sum of their guarantees. */
  cohortCap: ReadonlyMap<string, number>;
  /** Each cohort member's guarantee (what it gets back by reclaim). */
  guarantee: ReadonlyMap<string, number>;
}

/** The limits of a (checked) tree of queues. */
export function queueLimits(queues: readonly QueueLimitSpec[]): QueueLimits {
  const byName = new Map(queues.map((q) => [q.name, q]));
  const cap = new Map<string, number>();
  const cohortOf = new Map<string, string>();
  const cohortCap = new Map<string, number>();
  const guarantee = new Map<string, number>();
  const hasChildren = new Set(queues.filter((q) => q.parent !== null && byName.has(q.parent)).map((q) => q.parent!));
  for (const q of queues) {
    const parent = q.parent !== null ? byName.get(q.parent) : undefined;
    if (parent) {
      const g = q.quotaGpus ?? 0;
      cap.set(q.name, g + q.borrowingLimitGpus);
      cohortOf.set(q.name, parent.name);
      guarantee.set(q.name, g);
      cohortCap.set(parent.name, (cohortCap.get(parent.name) ?? 0) + g);
      continue;
    }
    if (q.quotaGpus === null) continue;
    cap.set(q.name, q.quotaGpus);
    if (hasChildren.has(q.name)) {
      cohortOf.set(q.name, q.name);
      guarantee.set(q.name, q.quotaGpus);
      cohortCap.set(q.name, (cohortCap.get(q.name) ?? 0) + q.quotaGpus);
    }
  }
  return { cap, cohortOf, cohortCap, guarantee };
}

export type QuotaVerdict = 'ADMIT' | 'QUEUE_LIMIT' | 'COHORT_LIMIT';

/**
 * Whether `queue` may take `gpus` more, given what every queue holds: within its own cap and its
 * cohort's (a queue already past a lowered limit takes nothing more, not even a CPU-only job).
 */
export function judgeQuota(limits: QueueLimits, held: ReadonlyMap<string, number>, queue: string, gpus: number): QuotaVerdict {
  const cap = limits.cap.get(queue);
  if (cap !== undefined && (held.get(queue) ?? 0) + gpus > cap) return 'QUEUE_LIMIT';
  const cohort = limits.cohortOf.get(queue);
  if (cohort !== undefined && cohortHeld(limits, held, cohort) + gpus > limits.cohortCap.get(cohort)!) return 'COHORT_LIMIT';
  return 'ADMIT';
}

/** What a cohort's members hold together. */
export function cohortHeld(limits: QueueLimits, held: ReadonlyMap<string, number>, cohort: string): number {
  let sum = 0;
  for (const [q, c] of limits.cohortOf) if (c === cohort) sum += held.get(q) ?? 0;
  return sum;
}

/** What the placement commit checks for a batch (libs/persistence placement-commit): each queue with its cap and cohort, and the cohorts' caps. */
export interface PlacementFence {
  queues: Array<{ queue: string; cap: number | null; cohort: string | null }>;
  cohorts: Array<{ cohort: string; cap: number }>;
}

/** The fence for placements into `queues`: each of them and every member of their cohorts (all of a cohort's holdings are summed), by name. */
export function placementFence(limits: QueueLimits, queues: Iterable<string>): PlacementFence {
  const cohorts = new Set<string>();
  const names = new Set<string>();
  for (const q of queues) {
    names.add(q);
    const c = limits.cohortOf.get(q);
    if (c !== undefined) cohorts.add(c);
  }
  for (const [q, c] of limits.cohortOf) if (cohorts.has(c)) names.add(q);
  return {
    queues: [...names].sort().map((queue) => ({ queue, cap: limits.cap.get(queue) ?? null, cohort: limits.cohortOf.get(queue) ?? null })),
    cohorts: [...cohorts].sort().map((cohort) => ({ cohort, cap: limits.cohortCap.get(cohort)! })),
  };
}
