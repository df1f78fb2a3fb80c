import type { FoldedEvent, JobState, RankWrite } from '@gantry/domain';
import { OutboxMessage, wakeRelayOnCommit } from './outbox';
import { Sql, textArrayLiteral } from './sql';
import { USAGE_GPU_MODEL } from './usage-ledger';

/** What a batch of reports does to one job (see foldReports), with the version it was decided from. */
export interface JobReportWrite {
  jobId: string;
  /** The job's version when it was read: the compare-and-set. */
  expectedVersion: number;
  /** The job's last event seq when it was read; the events get the seqs after it. */
  lastEventSeq: number;
  attempt: number;
  state: JobState;
  /** Set startedAt now. */
  start: boolean;
  /** Set finishedAt now, with this exit code and reason. */
  end: { exitCode: number | null; reason: string | null } | null;
  /** The attempt failed and is retried: back in QUEUED, its nodes cleared, waiting (BACKOFF) until this time. */
  retryAt: Date | null;
  /** The preempted attempt ended (ADR 0026): back in QUEUED, its nodes cleared, pendingReason PREEMPTED, no retry used. */
  preempted?: boolean;
  events: readonly FoldedEvent[];
  ranks: readonly RankWrite[];
}

export interface JobReportsWritten {
  /** Jobs whose write held (their version had not moved). */
  written: Set<string>;
  /** Whether some rank was released, so some node has capacity back. */
  freed: boolean;
}

/** An outbox message that goes out only if its job's write does (jobId), or whatever happens (null). */
export type ReportMessage = OutboxMessage & { jobId: string | null };

// Not prepared: run from a generic plan it cost more Postgres CPU than planning it each time
// (ADR 0012, bench/api/db-path), unlike the create and placement statements.
const WRITE_JOB_REPORTS = `WITH job_in AS (
       SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::text[], $5::bool[], $6::bool[], $7::int[], $8::text[], $29::timestamptz[], $30::bool[])
         AS t (id, expected, n_events, state, start, ended, exit_code, reason, retry_at, preempted)
     ), job_written AS (
       UPDATE jobs j SET state = i.state,
         started_at = CASE WHEN i.start THEN $9 ELSE j.started_at END,
         finished_at = CASE WHEN i.ended THEN $9 ELSE j.finished_at END,
         exit_code = CASE WHEN i.ended THEN i.exit_code ELSE j.exit_code END,
         reason = CASE WHEN i.ended THEN i.reason ELSE j.reason END,
         node_ids = CASE WHEN i.retry_at IS NOT NULL OR i.preempted THEN '{}' ELSE j.node_ids END,
         pending_reason = CASE WHEN i.retry_at IS NOT NULL THEN 'BACKOFF' WHEN i.preempted THEN 'PREEMPTED' ELSE j.pending_reason END,
         not_before = COALESCE(i.retry_at, j.not_before),
         retries_forgiven = j.retries_forgiven + CASE WHEN i.preempted THEN 1 ELSE 0 END,
         preempted_attempt = CASE WHEN i.state = 'RUNNING' THEN j.preempted_attempt END,
         preempted_for = CASE WHEN i.state = 'RUNNING' THEN j.preempted_for END,
         version = j.version + 1, last_event_seq = j.last_event_seq + i.n_events, updated_at = $9
       FROM job_in i WHERE j.id = i.id AND j.version = i.expected
       RETURNING j.id
     ), rank_in AS (
       SELECT * FROM unnest($10::uuid[], $11::int[], $12::text[], $13::text[], $14::int[], $15::bool[])
         AS t (job_id, attempt, node_id, state, exit_code, release)
       WHERE t.job_id IN (SELECT id FROM job_written)
     ), rank_kept AS (
       UPDATE attempt_nodes a SET state = r.state, exit_code = COALESCE(r.exit_code, a.exit_code)
       FROM rank_in r WHERE NOT r.release AND a.job_id = r.job_id AND a.attempt = r.attempt AND a.node_id = r.node_id
     ), rank_freed AS (
       UPDATE attempt_nodes a SET state = r.state, exit_code = COALESCE(r.exit_code, a.exit_code), released_at = $9
       FROM rank_in r WHERE r.release AND a.job_id = r.job_id AND a.attempt = r.attempt AND a.node_id = r.node_id AND a.released_at IS NULL
       RETURNING a.job_id, a.attempt, a.rank, a.node_id, a.gpus, a.cpu_cores, a.memory_mib, a.gpu_indices, a.created_at, a.state
     ), usage_recorded AS (
       -- The rank's usage record (ADR 0037), written by the flip that frees it: once, with it, or not at all.
       INSERT INTO usage_records (job_id, attempt, rank, owner, queue, gpu_model, node_id, gpus, cpu_cores, memory_mib, nodes, started_at, ended_at, outcome)
       SELECT f.job_id, f.attempt, f.rank, j.owner, j.queue, ${USAGE_GPU_MODEL}, f.node_id, f.gpus, f.cpu_cores, f.memory_mib, j.nodes,
         f.created_at, $9, CASE WHEN i.preempted THEN 'PREEMPTED' ELSE f.state END
       FROM rank_freed f JOIN job_in i ON i.id = f.job_id JOIN jobs j ON j.id = f.job_id LEFT JOIN nodes n ON n.id = f.node_id
     ), node_freed AS (
       UPDATE nodes n SET gpus_allocated = n.gpus_allocated - f.gpus, cpu_allocated = n.cpu_allocated - f.cpu,
         memory_allocated = n.memory_allocated - f.mem, updated_at = $9,
         gpus_held = ARRAY(SELECT d FROM unnest(n.gpus_held) AS d WHERE NOT d = ANY(COALESCE(f.devices, '{}')))
       FROM (
         SELECT s.*, fd.devices FROM (SELECT node_id, sum(gpus) AS gpus, sum(cpu_cores) AS cpu, sum(memory_mib) AS mem FROM rank_freed GROUP BY node_id) s
         LEFT JOIN (SELECT node_id, array_agg(x) AS devices FROM rank_freed, unnest(gpu_indices) AS x GROUP BY node_id) fd USING (node_id)
       ) f
       WHERE n.id = f.node_id
       RETURNING n.id
     ), node_started AS (
       -- A rank its node started ends the node's run of start failures (ADR 0035); a node without one is not rewritten.
       UPDATE nodes n SET start_failures = 0
       FROM (SELECT DISTINCT node_id FROM rank_in WHERE state IN ('RUNNING', 'SUCCEEDED')) s
       WHERE n.id = s.node_id AND n.start_failures > 0
       RETURNING n.id
     ), queue_freed AS (
       -- The freed GPUs leave their queues' counts (ADR 0039): last, once every node above is
       -- written (the counts wait on nothing after them), and in name order, as placements lock them.
       UPDATE queue_gpus_held c SET gpus = c.gpus - f.gpus
       FROM (SELECT j.queue, sum(rf.gpus) AS gpus FROM rank_freed rf JOIN jobs j ON j.id = rf.job_id GROUP BY j.queue) f
       WHERE c.queue = f.queue AND c.queue = ANY((
         SELECT array_agg(l.queue) FROM (SELECT c2.queue FROM queue_gpus_held c2
           WHERE c2.queue IN (SELECT j.queue FROM rank_freed rf JOIN jobs j ON j.id = rf.job_id)
             AND (SELECT count(*) FROM node_freed) + (SELECT count(*) FROM node_started) >= 0
           ORDER BY c2.queue FOR UPDATE OF c2) l)::text[])
     ), event_written AS (
       INSERT INTO job_events (job_id, seq, type, at, from_state, to_state, attempt, node_ids, reason)
       SELECT e.job_id, e.seq, e.type, $9, e.from_state, e.to_state, e.attempt, e.node_ids::text[], e.reason
       FROM unnest($16::uuid[], $17::int[], $18::text[], $19::text[], $20::text[], $21::int[], $22::text[], $23::text[])
         AS e (job_id, seq, type, from_state, to_state, attempt, node_ids, reason)
       WHERE e.job_id IN (SELECT id FROM job_written)
     ), message_written AS (
       INSERT INTO outbox (topic, key, value, headers)
       SELECT m.topic, m.key, m.value, m.headers::jsonb
       FROM unnest($24::uuid[], $25::text[], $26::text[], $27::text[], $28::text[]) AS m (job_id, topic, key, value, headers)
       WHERE m.job_id IS NULL OR m.job_id IN (SELECT id FROM job_written)
       RETURNING id
     )
     SELECT (SELECT array_agg(id)::text[] FROM job_written) AS written, (SELECT count(*) FROM message_written) AS messages,
       EXISTS (SELECT 1 FROM node_freed) AS freed`;

/**
 * Writes the outcome of many jobs' reports in one statement (one round trip, one commit):
 * for every job whose version is still the one it was read at, its state and times, its ranks, its
 * events and its messages. A job whose version moved (another writer got there first) is left out
 * whole and is not in the returned set; the caller reads it again and decides again.
 * Capacity is given back exactly once: only a rank whose released_at this statement flips from
 * NULL frees anything on its node; `freed` says whether any did (the caller then wakes the scheduler).
 * A release leaves the node's version as it is: it only gives capacity and devices back, so a
 * placement planned before it still holds (ADR 0003). A rank reported started (RUNNING, or already
 * SUCCEEDED) resets its node's count of start failures in a row (ADR 0035). Every rank released
 * leaves its usage record (ADR 0037), outcome its final state or PREEMPTED.
 */
export async function writeJobReports(sql: Sql, writes: readonly JobReportWrite[], messages: readonly ReportMessage[], now: Date): Promise<JobReportsWritten> {
  if (writes.length === 0 && messages.length === 0) return { written: new Set(), freed: false };
  const col = <T, R>(xs: readonly T[], f: (x: T) => R): R[] => xs.map(f);
  const ranks = writes.flatMap((w) => w.ranks.map((r) => ({ ...r, jobId: w.jobId, attempt: w.attempt })));
  const events = writes.flatMap((w) => w.events.map((e, i) => ({ ...e, jobId: w.jobId, seq: w.lastEventSeq + 1 + i })));
  const [row] = await sql.rows<{ written: string[] | null; messages: string; freed: boolean }>(WRITE_JOB_REPORTS, [
    col(writes, (w) => w.jobId),
    col(writes, (w) => w.expectedVersion),
    col(writes, (w) => w.events.length),
    col(writes, (w) => w.state),
    col(writes, (w) => w.start),
    col(writes, (w) => w.end !== null),
    col(writes, (w) => w.end?.exitCode ?? null),
    col(writes, (w) => w.end?.reason ?? null),
    now,
    col(ranks, (r) => r.jobId),
    col(ranks, (r) => r.attempt),
    col(ranks, (r) => r.nodeId),
    col(ranks, (r) => r.state),
    col(ranks, (r) => r.exitCode),
    col(ranks, (r) => r.release),
    col(events, (e) => e.jobId),
    col(events, (e) => e.seq),
    col(events, (e) => e.type),
    col(events, (e) => e.fromState ?? null),
    col(events, (e) => e.toState ?? null),
    col(events, (e) => e.attempt),
    col(events, (e) => textArrayLiteral(e.nodeIds)),
    col(events, (e) => e.reason ?? null),
    col(messages, (m) => m.jobId),
    col(messages, (m) => m.topic),
    col(messages, (m) => m.key),
    col(messages, (m) => JSON.stringify(m.value)),
    col(messages, (m) => JSON.stringify(m.headers ?? {})),
    col(writes, (w) => w.retryAt),
    col(writes, (w) => w.preempted ?? false),
  ]);
  if (Number(row.messages) > 0) wakeRelayOnCommit(sql);
  return { written: new Set(row.written ?? []), freed: row.freed };
}
