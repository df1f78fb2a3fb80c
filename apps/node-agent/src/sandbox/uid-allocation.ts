/** The uids an agent gives its attempts: an inclusive range the operator reserves for them (GANTRY_AGENT_UID_RANGE). */
export interface UidRange {
  min: number;
  max: number;
}

/** `"200000-299999"` as a range, or why it is not one (a uid of 0, a reversed or empty range, past 2^31 - 2). */
export function parseUidRange(text: string): UidRange | string {
  const m = /^(\d{1,10})-(\d{1,10})$/.exec(text.trim());
  if (!m) return 'must be two uids joined by "-", e.g. 200000-299999';
  const [min, max] = [Number(m[1]), Number(m[2])];
  if (min < 1) return 'must not include uid 0';
  if (max < min) return 'must not end below its start';
  if (max > 2 ** 31 - 2) return `must end at or below ${2 ** 31 - 2}`;
  return { min, max };
}

/**
 * The uid of `owner` on this node: the one it was given before, else the lowest uid of the range
 * that no owner holds and that is not `exclude` (the agent's own). Null when the range is used up.
 * Owners keep their uid for as long as the node keeps its map, so two owners never share one,
 * not even one after the other (a file one left in a shared place stays out of the next one's reach).
 */
export function uidForOwner(held: ReadonlyMap<string, number>, owner: string, range: UidRange, exclude: ReadonlySet<number>): number | null {
  const known = held.get(owner);
  if (known !== undefined) return known;
  const taken = new Set(held.values());
  for (let uid = range.min; uid <= range.max; uid++) if (!taken.has(uid) && !exclude.has(uid)) return uid;
  return null;
}
