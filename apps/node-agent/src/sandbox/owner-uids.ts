import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { UidRange, uidForOwner } from './uid-allocation';

/**
 * Which uid each owner's attempts run as on this node, kept in the agent's state directory
 * (`owner-uids.json`, readable by the agent only) so that a restarted agent gives every owner the
 * same uid again. A uid once given stays its owner's.
 */
export class OwnerUids {
  private readonly held: Map<string, number>;

  constructor(
    private readonly path: string,
    private readonly range: UidRange,
    private readonly exclude: ReadonlySet<number>,
  ) {
    this.held = new Map(Object.entries(readMap(path)).filter(([, uid]) => Number.isInteger(uid) && uid >= range.min && uid <= range.max));
  }

  /** `owner`'s uid; throws when the range has none left (the attempt cannot start, and says why). */
  uidOf(owner: string): number {
    const uid = uidForOwner(this.held, owner, this.range, this.exclude);
    if (uid === null) throw new Error(`GANTRY_AGENT_UID_RANGE ${this.range.min}-${this.range.max} has no uid left for owner ${owner}`);
    if (!this.held.has(owner)) {
      this.held.set(owner, uid);
      const tmp = `${this.path}.tmp`;
      writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.held)), { mode: 0o600 });
      renameSync(tmp, this.path);
    }
    return uid;
  }
}

function readMap(path: string): Record<string, number> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, number>) : {};
  } catch {
    return {};
  }
}
