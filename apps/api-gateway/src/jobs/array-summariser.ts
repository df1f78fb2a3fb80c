import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { arrayParentPath, arrayParentState, isTerminal } from '@gantry/domain';
import {
  ConcurrentUpdateError,
  JobRecord,
  Sql,
  appendJobEvents,
  autocommit,
  casUpdateJob,
  countArrayChildren,
  inTransaction,
  listOpenArrayParents,
} from '@gantry/persistence';
import type { Logger } from '@gantry/platform';
import { SERVICE_LOGGER } from '@gantry/runtime';

/**
 * How often open arrays are summarised: a parent's state trails its children's by at most this
 * (plus one tick's work). Its children-by-state summary in the job view is read live.
 */
export const ARRAY_SUMMARY_INTERVAL_MS = 1_000;
/** Parents summarised per statement of the tick (one grouped count of their children each batch). */
const PARENTS_PER_BATCH = 100;

/**
 * Keeps each array parent's state the summary of its children's (arrayParentState, ADR 0025),
 * level-based: every tick, every parent not ended is compared with a count of its children, and
 * moved on (compare-and-set on its version, one STATE_CHANGED event per step of arrayParentPath)
 * where the two differ. No child's state change touches the parent's row, so thousands of children
 * ending at once never queue on it. Every gateway replica runs it; a lost compare-and-set means
 * another did the same work, and the next tick looks again.
 */
@Injectable()
export class ArraySummariser implements OnApplicationBootstrap, OnModuleDestroy {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = null));
    }, ARRAY_SUMMARY_INTERVAL_MS);
    this.timer.unref();
  }

  /** Every open parent, in batches by (created_at, id). */
  async tick(now = new Date()): Promise<void> {
    try {
      let after: { createdAt: Date; id: string } | null = null;
      for (;;) {
        const parents = await listOpenArrayParents(autocommit(this.ds), after, PARENTS_PER_BATCH);
        if (parents.length === 0) return;
        await this.summariseEach(parents, now);
        const last = parents[parents.length - 1];
        after = { createdAt: last.createdAt, id: last.id };
        if (parents.length < PARENTS_PER_BATCH) return;
      }
    } catch (err) {
      this.logger.warn({ err }, 'array summary failed; next tick retries');
    }
  }

  private async summariseEach(parents: JobRecord[], now: Date): Promise<void> {
    const counts = await countArrayChildren(
      autocommit(this.ds),
      parents.map((p) => p.id),
    );
    for (const parent of parents) {
      try {
        await inTransaction(this.ds, (sql) => moveParent(sql, parent, counts.get(parent.id)!, now));
      } catch (e) {
        if (!(e instanceof ConcurrentUpdateError)) throw e;
      }
    }
  }

  /** These parents, now, in the caller's transaction (a cancel summarises its parent at once). */
  async summarise(sql: Sql, parents: JobRecord[], now: Date): Promise<void> {
    const counts = await countArrayChildren(
      sql,
      parents.map((p) => p.id),
    );
    for (const parent of parents) await moveParent(sql, parent, counts.get(parent.id)!, now);
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

/** Moves one parent to the state its children's counts give, if that differs; throws ConcurrentUpdateError on a lost race. */
async function moveParent(sql: Sql, parent: JobRecord, children: Parameters<typeof arrayParentState>[0], now: Date): Promise<void> {
  const next = arrayParentState(children, parent);
  const path = arrayParentPath(parent.state, next);
  if (path.length === 0) return;
  const ended = isTerminal(next);
  const reason =
    next === 'FAILED'
      ? `ARRAY_CHILDREN_FAILED: ${children.FAILED} of ${parent.arraySize} failed`
      : next === 'CANCELLED'
        ? parent.cancelRequested
          ? 'CANCELLED_BY_USER'
          : `ARRAY_CHILDREN_CANCELLED: ${children.CANCELLED} of ${parent.arraySize} cancelled`
        : null;
  const { firstSeq } = await casUpdateJob(
    sql,
    parent.id,
    parent.version,
    {
      state: next,
      pendingReason: null,
      reason,
      startedAt: parent.startedAt ?? (path.includes('RUNNING') ? now : null),
      finishedAt: ended ? now : null,
    },
    path.length,
    now,
  );
  let from = parent.state;
  await appendJobEvents(
    sql,
    parent.id,
    firstSeq,
    path.map((to) => {
      const event = { type: 'STATE_CHANGED' as const, at: now, fromState: from, toState: to, reason: isTerminal(to) ? (reason ?? undefined) : undefined };
      from = to;
      return event;
    }),
  );
}
