import { NodeLiveStore, PagedReadOptions } from '@gantry/persistence';
import { BackgroundRead } from './background-read';

/**
 * When each node was last heard, kept between cycles: a refresh reads only the beats written since
 * the newest one it has seen (less `lagMs`, for beats written a little after they were stamped),
 * not all 50,000 scores. Everything is re-read every `fullEveryMs` (beside the cycles, paced, see
 * refresh), which also forgets nodes that a Redis flush removed. Health is judged from these
 * times at each cycle's clock, so a node still ages into DEGRADED and UNHEALTHY between reads.
 */
export class LivenessSnapshot {
  private heard = new Map<string, number>();
  /** Nodes whose time changed since the last takeChanges(); 'all' until the first is taken. */
  private changes: Set<string> | 'all' = 'all';
  private newest = Number.NEGATIVE_INFINITY;
  private fullAt = Number.NEGATIVE_INFINITY;
  /** The periodic full read while it runs beside the cycles, and the nodes the reads since it began heard. */
  private fullRead: { read: BackgroundRead<Map<string, number>>; heardSince: Set<string> } | null = null;

  constructor(
    private readonly live: NodeLiveStore,
    private readonly lagMs: number,
    private readonly fullEveryMs: number,
    /** Paces the periodic full read (not the first, which the first cycle waits for). */
    private readonly fullPaging: PagedReadOptions = {},
  ) {}

  /**
   * Reads the beats written since the newest seen (less the lag). The first read is a full one;
   * after it, the full read due every `fullEveryMs` runs in the background (BackgroundRead) and is
   * taken in by the first refresh after it ends: its times, each raised to what the reads since it
   * began saw, plus the nodes those reads heard that it lacks. What it lacks and nothing heard
   * since it began (a Redis flush, a node silent past the dead timeout) is forgotten.
   */
  async refresh(nowMs: number, deadMs: number): Promise<void> {
    if (this.fullAt === Number.NEGATIVE_INFINITY) {
      this.fullAt = nowMs;
      this.takeFull(await this.live.heardSince(nowMs - deadMs), new Set());
      return;
    }
    if (this.fullRead === null && nowMs - this.fullAt >= this.fullEveryMs) {
      this.fullAt = nowMs;
      this.fullRead = { read: new BackgroundRead(this.live.heardSince(nowMs - deadMs, this.fullPaging)), heardSince: new Set() };
    }
    const full = this.fullRead?.read.settled();
    if (full && this.fullRead) {
      const { heardSince } = this.fullRead;
      this.fullRead = null;
      if (!full.ok) {
        this.fullAt = Number.NEGATIVE_INFINITY; // read again, in full, by the next refresh
        throw full.error;
      }
      this.takeFull(full.value, heardSince);
    }
    const read = await this.live.heardSince(this.newest - this.lagMs);
    for (const [id, at] of read) {
      if (at <= (this.heard.get(id) ?? Number.NEGATIVE_INFINITY)) continue;
      this.heard.set(id, at);
      if (this.changes !== 'all') this.changes.add(id);
      this.fullRead?.heardSince.add(id);
    }
    for (const at of read.values()) if (at > this.newest) this.newest = at;
  }

  /**
   * Replaces the times with a full read, keeping what the reads since it began heard (newer than it,
   * or missing from it). Only the nodes whose time it changes (or that it forgets) count as changed:
   * 'all' would have every node looked up and judged again by the next cycle.
   */
  private takeFull(read: Map<string, number>, heardSince: ReadonlySet<string>): void {
    for (const id of heardSince) {
      const at = this.heard.get(id)!;
      if (at > (read.get(id) ?? Number.NEGATIVE_INFINITY)) read.set(id, at);
    }
    const changes = this.changes;
    if (changes !== 'all') {
      for (const [id, at] of read) if (this.heard.get(id) !== at) changes.add(id);
      for (const id of this.heard.keys()) if (!read.has(id)) changes.add(id);
    }
    this.heard = read;
    for (const at of read.values()) if (at > this.newest) this.newest = at;
  }

  /** The nodes heard again since the last call ('all': look every node up again). */
  takeChanges(): ReadonlySet<string> | 'all' {
    const taken = this.changes;
    this.changes = new Set();
    return taken;
  }

  lastHeard(nodeId: string): number | null {
    return this.heard.get(nodeId) ?? null;
  }
}
