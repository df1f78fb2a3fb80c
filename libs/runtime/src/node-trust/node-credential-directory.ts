import { KeyObject } from 'node:crypto';
import { DataSource } from 'typeorm';
import { nodeSigningKey } from '@gantry/messaging';
import { autocommit, loadEnrollmentsChangedSince } from '@gantry/persistence';
import { deriveNodeCredential } from './node-credential';

export type NodeKeyLookup = { key: KeyObject } | { refused: 'unknown-node' | 'revoked' };

interface Entry {
  generation: number;
  revoked: boolean;
  key: KeyObject | null;
}

/**
 * Who is enrolled, as this process knows it: every enrollment read at start, then only what
 * changed, every `refreshMs` (250 ms: a revocation or rotation takes effect here within that and
 * one read). Keys are derived on first use and kept until the enrollment changes.
 */
export class NodeCredentialDirectory {
  private readonly entries = new Map<string, Entry>();
  private horizon: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private lastMissRefreshAt = 0;
  private missRefresh: Promise<void> | null = null;
  /** Reads started, and the last one finished, by refreshSoon: they run one at a time, in order. */
  private missReadsStarted = 0;
  private missReadsDone = 0;
  private readonly missRefreshMs = 100;

  constructor(
    private readonly ds: DataSource,
    private readonly secret: string,
    private readonly logger: { warn(obj: object, msg: string): void },
    private readonly refreshMs = 250,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(
      () => void this.refresh().catch((err) => this.logger.warn({ err }, 'node enrollments not refreshed; next tick retries')),
      this.refreshMs,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Reads what changed since the last read (everything, the first time). */
  async refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const changes = await loadEnrollmentsChangedSince(autocommit(this.ds), this.horizon);
        for (const e of changes.enrollments) {
          const cur = this.entries.get(e.nodeId);
          if (cur && cur.generation === e.generation && cur.revoked === e.revoked) continue;
          this.entries.set(e.nodeId, { generation: e.generation, revoked: e.revoked, key: null });
        }
        this.horizon = changes.horizon;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /**
   * Reads what changed, now: a message failed to verify, perhaps because its node was enrolled,
   * enrolled again (rotated) or revoked since the last read. The read starts after the call, so a
   * change committed before it is seen; callers at the same time share it; and a new one starts at
   * most every `missRefreshMs` (later callers wait for it), so a flood of forgeries costs a few reads
   * a second, not one each.
   */
  async refreshSoon(): Promise<void> {
    // Until a read that started after this call has finished: one in flight now may have started
    // before the change it is asked about. Counted, not timed: two messages of one fetch ask in the
    // same millisecond, and a clock that says "a read started at or after the ask" let the second
    // go on before the read it relied on had finished (it then refused a node enrolled before it).
    const needed = this.missReadsStarted + 1;
    while (this.missReadsDone < needed) {
      this.missRefresh ??= (async () => {
        // Not sooner than missRefreshMs after the last one: wait out the rest of it.
        const wait = this.lastMissRefreshAt + this.missRefreshMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        while (this.refreshing) await this.refreshing;
        const read = ++this.missReadsStarted;
        this.lastMissRefreshAt = Date.now();
        await this.refresh();
        this.missReadsDone = read;
      })().finally(() => (this.missRefresh = null));
      await this.missRefresh;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The node's enrollment as last read (generation and revocation), null when it was never enrolled. */
  enrollmentOf(nodeId: string): { generation: number; revoked: boolean } | null {
    const e = this.entries.get(nodeId);
    return e ? { generation: e.generation, revoked: e.revoked } : null;
  }

  /** The key a node signs with now, or why it may not speak. */
  keyOf(nodeId: string): NodeKeyLookup {
    const e = this.entries.get(nodeId);
    if (!e) return { refused: 'unknown-node' };
    if (e.revoked) return { refused: 'revoked' };
    e.key ??= nodeSigningKey(deriveNodeCredential(this.secret, nodeId, e.generation));
    return { key: e.key };
  }
}
