import type { JobState } from '@gantry/domain';
import { Sql } from './sql';

export interface NewJobEvent {
  type: 'CREATED' | 'STATE_CHANGED' | 'CANCEL_REQUESTED' | 'PREEMPTION_REQUESTED' | 'REPORT_REJECTED' | 'RECONCILED';
  at: Date;
  fromState?: JobState;
  toState?: JobState;
  attempt?: number;
  nodeIds?: string[];
  reason?: string;
}

/**
 * Appends events with seq firstSeq, firstSeq+1, ... The caller got firstSeq from the
 * compare-and-set that bumped jobs.last_event_seq, so seqs have no gaps even under racing writers.
 */
export async function appendJobEvents(sql: Sql, jobId: string, firstSeq: number, events: NewJobEvent[]): Promise<void> {
  await appendEventsOfJobs(
    sql,
    events.map((event, i) => ({ jobId, seq: firstSeq + i, event })),
  );
}

/** Events of any number of jobs in one statement; each seq was reserved as appendJobEvents says. */
export async function appendEventsOfJobs(sql: Sql, rows: Array<{ jobId: string; seq: number; event: NewJobEvent }>): Promise<void> {
  if (rows.length === 0) return;
  const params: unknown[] = [];
  const tuples = rows.map(({ jobId, seq, event: e }, i) => {
    params.push(jobId, seq, e.type, e.at, e.fromState ?? null, e.toState ?? null, e.attempt ?? null, e.nodeIds ?? null, e.reason ?? null);
    const b = i * 9;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8}, $${b + 9})`;
  });
  await sql.rows(`INSERT INTO job_events (job_id, seq, type, at, from_state, to_state, attempt, node_ids, reason) VALUES ${tuples.join(', ')}`, params);
}
