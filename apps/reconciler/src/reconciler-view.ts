import { Inject, Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { AbsenceVerdict, ContinuityClock, absenceCountsFrom, heardAt, interrupted, newClock } from '@gantry/domain';
import type { Logger } from '@gantry/platform';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import { ReconcilerEnv } from './config';

const suspended = new Gauge({
  name: 'gantry_reconciler_absence_suspended',
  help: "1 while phantom judgements are suspended because the reconciler's own view of heartbeats or reports is stale",
});

/** The inputs whose silence the phantom judgement must not take for a node's. */
export type ViewInput = 'heartbeat fetches' | 'report fetches';

/**
 * How fresh this replica's view of the fleet is (ADR 0007): a continuity clock per consumer (its
 * completed fetches) and one for the newest beat consumed from any node. NodeReconciler asks
 * `absence()` before judging any attempt a phantom.
 */
@Injectable()
export class ReconcilerView {
  private clocks: Record<ViewInput | 'newest beat', ContinuityClock>;
  private lastVerdict: AbsenceVerdict['kind'] | null = null;

  constructor(
    @Inject(CONFIG) config: ReconcilerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    // An idle consumer completes a fetch at least every second (maxWaitTimeInMs); a gap of a
    // heartbeat period (2 s at least) means it was not hearing the broker.
    const fetchGapMs = Math.max(2_000, config.GANTRY_HEARTBEAT_MS);
    this.clocks = {
      'heartbeat fetches': newClock('heartbeat fetches', fetchGapMs),
      'report fetches': newClock('report fetches', fetchGapMs),
      // No node's beat newer than the ingest stall: the beats are lagging, or the whole fleet went
      // silent at once, which the failure detector also treats as ours (ADR 0007).
      'newest beat': newClock('newest beat', config.GANTRY_INGEST_STALL_MS),
    };
  }

  fetched(input: ViewInput, atMs: number): void {
    this.clocks[input] = heardAt(this.clocks[input], atMs);
  }

  interrupted(input: ViewInput): void {
    this.clocks[input] = interrupted(this.clocks[input]);
  }

  beatSent(sentAtMs: number): void {
    this.clocks['newest beat'] = heardAt(this.clocks['newest beat'], sentAtMs);
  }

  /** Since when absence may be counted now; null while the view is stale. */
  absence(nowMs: number): number | null {
    const v = absenceCountsFrom(Object.values(this.clocks), nowMs);
    if (v.kind !== this.lastVerdict) {
      suspended.set(v.kind === 'suspended' ? 1 : 0);
      if (v.kind === 'suspended') this.logger.warn({ reason: v.reason }, "phantom judgements suspended: the reconciler's own view is stale");
      else if (this.lastVerdict !== null) this.logger.info({ countsFrom: new Date(v.since).toISOString() }, 'phantom judgements resumed');
      this.lastVerdict = v.kind;
    }
    return v.kind === 'count' ? v.since : null;
  }
}
