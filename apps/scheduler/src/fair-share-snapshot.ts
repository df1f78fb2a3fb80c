import { FairShareInput, FairShareStanding, fairShareHorizonSeconds } from '@gantry/domain';
import { FairShareStandings, Sql, loadFairShareStandings } from '@gantry/persistence';

/**
 * Every queue's and owner's decayed usage and GPUs held (ADR 0038), read from Postgres at most
 * every `refreshMs` (alongside the holdings, HoldingsSnapshot) and, in between, moved on by this
 * replica's own placements. Usage itself is a second or so stale in between: it moves by GPU-seconds
 * while a queue's standing is in GPU-hours, and what changes the order quickly, the GPUs held, is
 * kept up to date.
 */
export class FairShareSnapshot {
  private standings: FairShareStandings = new Map();
  private readAt = Number.NEGATIVE_INFINITY;
  private readonly horizonSeconds: number;

  constructor(
    private readonly refreshMs: number,
    private readonly halfLifeSeconds: number,
  ) {
    this.horizonSeconds = fairShareHorizonSeconds(halfLifeSeconds);
  }

  async refresh(sql: Sql, nowMs: number): Promise<FairShareInput> {
    if (nowMs - this.readAt >= this.refreshMs) {
      this.standings = await loadFairShareStandings(sql, nowMs, this.halfLifeSeconds);
      this.readAt = nowMs;
    }
    return { horizonSeconds: this.horizonSeconds, usage: this.standings };
  }

  /** A placement this replica committed: `gpus` in all, for `owner` in `queue`. */
  add(queue: string, owner: string, gpus: number): void {
    const owners = this.standings.get(queue) ?? new Map<string, FairShareStanding>();
    const s = owners.get(owner) ?? { usage: 0, gpus: 0 };
    owners.set(owner, { usage: s.usage, gpus: s.gpus + gpus });
    this.standings.set(queue, owners);
  }
}
