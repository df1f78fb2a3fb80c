import { JobEventRecord } from './job-rows';
import { Sql } from './sql';

/**
 * A place in the global order of job events: (stream_xid, jobId, seq), ascending. stream_xid is
 * the writer's transaction id, never lower than the job's previous event's (migration
 * 1764510000000, ADR 0028), so each job's events keep their seq order in it.
 */
export interface StreamPosition {
  /** xid8 as a decimal string. */
  xid: string;
  jobId: string;
  seq: number;
}

/** One event as the streams see it: the event, whose job it is, and where it sits in the order. */
export interface StreamedJobEvent extends JobEventRecord {
  jobId: string;
  owner: string;
  queue: string;
  position: StreamPosition;
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Before every event ever written. */
export const STREAM_ORIGIN: StreamPosition = { xid: '0', jobId: NIL_UUID, seq: 0 };

export interface StreamFilter {
  /** Only this owner's jobs (a user's view). */
  owner?: string;
  queue?: string;
}

/**
 * The stream read for one filter shape: only rows below the horizon (the xmin of this statement's
 * snapshot) are read, because every transaction under it has ended, so a row that commits later
 * sorts after everything returned (ADR 0028). Planned on every call, not prepared: a cached generic
 * plan, made once while the tables were small or blind to a filter that is absent, joined jobs by a
 * full scan per call, and under load it ran into the statement timeout and took Postgres' CPU from
 * everything else (ADR 0028, bench:dispatch). With the values known, the plan is
 * the index range on job_events_stream and one primary-key probe of jobs per event.
 */
function streamQuery(after: StreamPosition, limit: number, filter: StreamFilter): { text: string; params: unknown[] } {
  const params: unknown[] = [after.xid, after.jobId, after.seq, limit];
  let filters = '';
  if (filter.owner !== undefined) filters += ` AND j.owner = $${params.push(filter.owner)}`;
  if (filter.queue !== undefined) filters += ` AND j.queue = $${params.push(filter.queue)}`;
  const text = `SELECT e.stream_xid::text AS stream_xid, e.job_id, e.seq, e.type, e.at, e.from_state, e.to_state,
       e.attempt, e.node_ids, e.reason, j.owner, j.queue
  FROM job_events e JOIN jobs j ON j.id = e.job_id
 WHERE e.stream_xid < pg_snapshot_xmin(pg_current_snapshot())
   AND (e.stream_xid, e.job_id, e.seq) > ($1::xid8, $2::uuid, $3::int)${filters}
 ORDER BY e.stream_xid, e.job_id, e.seq
 LIMIT $4`;
  return { text, params };
}

/**
 * Up to `limit` events after `after`, in stream order, filtered. An answer shorter than `limit`
 * means the reader has caught up with everything committed below the horizon at that moment.
 */
export async function readJobEventStream(sql: Sql, after: StreamPosition, limit: number, filter: StreamFilter = {}): Promise<StreamedJobEvent[]> {
  const { text, params } = streamQuery(after, limit, filter);
  const rows = await sql.rows<Record<string, any>>(text, params);
  return rows.map((r) => ({
    jobId: r.job_id,
    owner: r.owner,
    queue: r.queue,
    seq: r.seq,
    type: r.type,
    at: r.at,
    fromState: r.from_state,
    toState: r.to_state,
    attempt: r.attempt,
    nodeIds: r.node_ids,
    reason: r.reason,
    position: { xid: r.stream_xid, jobId: r.job_id, seq: r.seq },
  }));
}

/** Where "from now on" starts: every event before it had committed when this was read. */
export async function currentStreamPosition(sql: Sql): Promise<StreamPosition> {
  const [row] = await sql.rows<{ horizon: string }>(`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon`);
  // (horizon, nil, 0) sorts before every row whose stream_xid is the horizon or above.
  return { xid: row.horizon, jobId: NIL_UUID, seq: 0 };
}

export function compareStreamPositions(a: StreamPosition, b: StreamPosition): number {
  const ax = BigInt(a.xid);
  const bx = BigInt(b.xid);
  if (ax !== bx) return ax < bx ? -1 : 1;
  if (a.jobId !== b.jobId) return a.jobId < b.jobId ? -1 : 1; // uuids compare as Postgres orders them (lowercase hex)
  return a.seq - b.seq;
}

/** Where a single-writer reader of the stream (the Kafka publisher) got to; null before its first save. */
export async function loadStreamOffset(sql: Sql, name: string): Promise<StreamPosition | null> {
  const [row] = await sql.rows<{ stream_xid: string; job_id: string; seq: number }>(
    `SELECT stream_xid::text AS stream_xid, job_id, seq FROM job_event_stream_offsets WHERE name = $1`,
    [name],
  );
  return row ? { xid: row.stream_xid, jobId: row.job_id, seq: row.seq } : null;
}

export async function saveStreamOffset(sql: Sql, name: string, at: StreamPosition): Promise<void> {
  await sql.rows(
    `INSERT INTO job_event_stream_offsets (name, stream_xid, job_id, seq, updated_at) VALUES ($1, $2::xid8, $3, $4, now())
     ON CONFLICT (name) DO UPDATE SET stream_xid = EXCLUDED.stream_xid, job_id = EXCLUDED.job_id, seq = EXCLUDED.seq, updated_at = now()`,
    [name, at.xid, at.jobId, at.seq],
  );
}
