import { NodeLiveStore } from '@gantry/persistence';

/**
 * When each node was last heard, kept between cycles: a refresh reads only the beats written since
 * the newest one it has seen (less `lagMs`, for beats written a little after they were stamped),
 * not all 50,000 scores. Everything is re-read every `fullEveryMs`, which also forgets nodes that a
 * Redis flush removed. Health is judged from these times at each cycle's clock, so a node still
 * ages into DEGRADED and UNHEALTHY between reads.
 */
export class LivenessSnapshot {
  private heard = new Map<string, number>();
  /** Nodes whose time changed since the last takeChanges(); 'all' after a full read. */
  private changes: Set<string> | 'all' = 'all';
  private newest = Number.NEGATIVE_INFINITY;
  private fullAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly live: NodeLiveStore,
    private readonly lagMs: number,
    private readonly fullEveryMs: number,
  ) {}

  async refresh(nowMs: number, deadMs: number): Promise<void> {
    const full = nowMs - this.fullAt >= this.fullEveryMs;
    const read = await this.live.heardSince(full ? nowMs - deadMs : this.newest - this.lagMs);
    if (full) {
      this.heard = read;
      this.fullAt = nowMs;
      this.changes = 'all';
    } else {
      for (const [id, at] of read) {
        if (at <= (this.heard.get(id) ?? Number.NEGATIVE_INFINITY)) continue;
        this.heard.set(id, at);
        if (this.changes !== 'all') this.changes.add(id);
      }
    }
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
