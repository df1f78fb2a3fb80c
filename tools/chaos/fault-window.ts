import { withDb } from '@gantry/stack';
import { LoadGenerator } from './load-generator';

/** What clients and jobs went through between a fault and the next one. */
export interface FaultWindow {
  /** Creates that ended without a job (network errors or 5xx after the client's retries), in [t0, recovered]. */
  clientFailures: number;
  /** Creates answered with a final 4xx in [t0, recovered] (none expected). */
  clientRejected: number;
  /** Attempts the client retried (hidden from its caller) in [t0, recovered]; and retries the budget refused. */
  clientRetries: number;
  retriesRefused: number;
  /** Creates answered 200 Idempotent-Replayed: a retry found the job a lost answer had created. */
  replayed: number;
  /** Longest wait from submission to RUNNING of jobs submitted in [t0, recovered] (ms; null: none ran). */
  maxWaitToRunningMs: number | null;
  /** Job events with a reason, or of type REPORT_REJECTED/RECONCILED, in [t0, windowEnd]: "STATE_CHANGED RUNNING->QUEUED PHANTOM" -> count. */
  events: Record<string, number>;
}

export async function faultWindow(load: LoadGenerator, databaseUrl: string, t0: number, recoveredAt: number, windowEnd: number): Promise<FaultWindow> {
  const inWindow = (t: number) => t >= t0 && t <= recoveredAt;
  const ended = load.records.filter((r) => inWindow(r.endedAt));
  const { events, maxWait } = await withDb(databaseUrl, async (c) => {
    const ev = await c.query(
      `SELECT type, from_state, to_state, reason, count(*)::int AS n FROM job_events
       WHERE at >= $1 AND at <= $2 AND (reason IS NOT NULL OR type IN ('REPORT_REJECTED', 'RECONCILED'))
       GROUP BY 1, 2, 3, 4 ORDER BY n DESC`,
      [new Date(t0), new Date(windowEnd)],
    );
    const wait = await c.query(
      `SELECT max(extract(epoch FROM (r.at - j.created_at)) * 1000)::float AS ms
       FROM jobs j CROSS JOIN LATERAL (
         SELECT min(at) AS at FROM job_events e WHERE e.job_id = j.id AND e.to_state IN ('RUNNING', 'SUCCEEDED')) r
       WHERE j.created_at >= $1 AND j.created_at <= $2`,
      [new Date(t0), new Date(recoveredAt)],
    );
    return { events: ev.rows, maxWait: wait.rows[0]?.ms as number | null };
  });
  const byKind: Record<string, number> = {};
  for (const e of events) {
    const change = e.from_state || e.to_state ? ` ${e.from_state ?? ''}->${e.to_state ?? ''}` : '';
    byKind[`${e.type}${change}${e.reason ? ` ${e.reason}` : ''}`] = e.n;
  }
  return {
    clientFailures: ended.filter((r) => r.outcome === 'failed').length,
    clientRejected: ended.filter((r) => r.outcome === 'rejected').length,
    clientRetries: load.budget.retriedAt.filter(inWindow).length,
    retriesRefused: load.budget.refusedAt.filter(inWindow).length,
    replayed: ended.filter((r) => r.outcome === 'replayed').length,
    maxWaitToRunningMs: maxWait === null || maxWait === undefined ? null : Math.round(maxWait),
    events: byKind,
  };
}
