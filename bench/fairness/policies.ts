/**
 * The scheduling policies bench:fairness compares, as the services' env (issue 41): the policy
 * before it (weighted DRF over what runs now, a strict reservation), the new one (decayed fair
 * share, runtime-aware backfill) and the new one with a strict reservation, whose difference from
 * the new one is what runtime-aware backfill adds.
 */
export const POLICY_NAMES = ['previous', 'new', 'new-strict'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

export interface Policy {
  name: PolicyName;
  /** Whether the queues get the teams' `newPolicyQueue` fields (parent, borrowingLimit). */
  newQueues: boolean;
  env: Record<string, string>;
}

export function policy(name: PolicyName, halfLifeHours: number): Policy {
  const decayed = { GANTRY_SCHEDULER_FAIRNESS: 'decayed', GANTRY_FAIRSHARE_HALF_LIFE_HOURS: String(halfLifeHours) };
  switch (name) {
    case 'previous':
      return { name, newQueues: false, env: { GANTRY_SCHEDULER_FAIRNESS: 'drf', GANTRY_SCHEDULER_BACKFILL: 'strict' } };
    case 'new':
      return { name, newQueues: true, env: { ...decayed, GANTRY_SCHEDULER_BACKFILL: 'runtime' } };
    case 'new-strict':
      return { name, newQueues: true, env: { ...decayed, GANTRY_SCHEDULER_BACKFILL: 'strict' } };
  }
}

export function parsePolicies(value: string): PolicyName[] {
  const names = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  for (const n of names)
    if (!(POLICY_NAMES as readonly string[]).includes(n)) throw new Error(`BENCH_FAIRNESS_POLICIES: unknown policy ${n} (${POLICY_NAMES.join(', ')})`);
  if (names.length === 0) throw new Error(`BENCH_FAIRNESS_POLICIES: name at least one of ${POLICY_NAMES.join(', ')}`);
  return names as PolicyName[];
}
