import { QueueHoldings, Sql, queueHoldings } from '@gantry/persistence';

const ZERO: QueueHoldings = { gpus: 0, cpuCores: 0, memoryMiB: 0 };

/**
 * What each queue's placed and running jobs hold, read from Postgres at most every `refreshMs`
 * (the read is a pass over every active job) and, in between, moved on by this replica's own
 * placements. Releases show at the next read, so in between a queue looks fuller than it is: DRF
 * shares err towards placing less, never more, for that long. (Other replicas' placements also show
 * only at the next read.) The GPUs the quota check uses come from the exact per-queue counts, read
 * every cycle, and the placement commit enforces quotas across replicas (ADR 0039).
 */
export class HoldingsSnapshot {
  private held = new Map<string, QueueHoldings>();
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly refreshMs: number) {}

  async refresh(sql: Sql, nowMs: number): Promise<ReadonlyMap<string, QueueHoldings>> {
    if (nowMs - this.readAt >= this.refreshMs) {
      this.held = await queueHoldings(sql);
      this.readAt = nowMs;
    }
    return this.held;
  }

  /** A placement this replica committed: `perRank` on each of `nodes` nodes. */
  add(queue: string, perRank: QueueHoldings, nodes: number): void {
    const h = this.held.get(queue) ?? ZERO;
    this.held.set(queue, {
      gpus: h.gpus + perRank.gpus * nodes,
      cpuCores: h.cpuCores + perRank.cpuCores * nodes,
      memoryMiB: h.memoryMiB + perRank.memoryMiB * nodes,
    });
  }
}
