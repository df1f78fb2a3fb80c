/**
 * What each team is entitled to of the GPU-seconds delivered in a window: a weighted max-min fair
 * division ("water-filling") of the total. A team that had nothing waiting for (almost) the whole
 * window wanted no more than it got, so its demand is what it used; a backlogged team's demand has
 * no bound. Backlogged teams then split what the satisfied ones leave in proportion to weight.
 */
export interface TeamDemand {
  team: string;
  weight: number;
  used: number;
  backlogged: boolean;
}

/** Entitled amounts, in the unit of `used`, summing to the total used. */
export function entitlements(teams: readonly TeamDemand[]): Map<string, number> {
  const total = teams.reduce((s, t) => s + t.used, 0);
  const out = new Map<string, number>();
  let left = total;
  let open = teams.filter((t) => t.weight > 0);
  for (const t of teams) if (!(t.weight > 0)) out.set(t.team, 0);
  // Raise one level λ (GPU-seconds per unit of weight) until it meets the total; teams whose demand
  // lies below λ·weight are satisfied at their demand and leave the rest to the others.
  for (;;) {
    const weight = open.reduce((s, t) => s + t.weight, 0);
    if (open.length === 0 || weight === 0) break;
    const level = left / weight;
    const satisfied = open.filter((t) => !t.backlogged && t.used < level * t.weight);
    if (satisfied.length === 0) {
      for (const t of open) out.set(t.team, level * t.weight);
      break;
    }
    for (const t of satisfied) {
      out.set(t.team, t.used);
      left -= t.used;
    }
    open = open.filter((t) => !satisfied.includes(t));
  }
  return out;
}
