import { KillCommand, TOPICS } from '@gantry/contracts';
import type { PreemptibleAttempt } from '@gantry/domain';
import { appendEventsOfJobs } from './job-events';
import { enqueueOutbox } from './outbox';
import { ConcurrentUpdateError, Sql } from './sql';

/** The reason a preempted attempt's KILL, events and requeue carry (contract §4.7). */
export const PREEMPTED = 'PREEMPTED';

/**
 * Every RUNNING attempt of a queue whose band is below `belowBand`, with what each rank holds and
 * whether it is already stopping for a preemptor. Only RUNNING: an attempt its agent has not
 * reported yet may not be running there yet, so a KILL could miss it and nothing would report its end.
 * One index range per lower queue (jobs_active_by_queue); read only in a cycle that has a preemptor.
 */
export async function loadPreemptibleAttempts(sql: Sql, belowBand: number): Promise<PreemptibleAttempt[]> {
  const rows = await sql.rows<{
    id: string;
    attempt: number;
    priority: number;
    node_ids: string[];
    gpus: number;
    cpu_cores: number;
    memory_mib: string;
    last_preempted_at: Date | null;
    preempted_attempt: number | null;
  }>(
    `SELECT j.id, j.attempt, q.priority, j.node_ids, j.gpus, j.cpu_cores, j.memory_mib, j.last_preempted_at, j.preempted_attempt
     FROM queues q JOIN jobs j ON j.queue = q.name AND j.state = 'RUNNING'
     WHERE q.priority < $1`,
    [belowBand],
  );
  return rows.map((r) => ({
    jobId: r.id,
    attempt: r.attempt,
    band: r.priority,
    nodeIds: r.node_ids ?? [],
    perNode: { gpus: r.gpus, cpuCores: r.cpu_cores, memoryMiB: Number(r.memory_mib) },
    lastPreemptedAtMs: r.last_preempted_at ? r.last_preempted_at.getTime() : null,
    preempting: r.preempted_attempt !== null,
  }));
}

/** A RUNNING attempt of a cohort member, as reclaim sees it (ADR 0039). */
export interface CohortAttempt {
  jobId: string;
  attempt: number;
  queue: string;
  /** Every GPU it holds (a gang counts every rank). */
  gpus: number;
  /** When it started running (ms). */
  placedAt: number;
  lastPreemptedAtMs: number | null;
  /** Already stopping for some preemptor. */
  preempting: boolean;
}

/** Every RUNNING attempt of the queues named (one index range each, jobs_active_by_queue): read only when a lender may reclaim. */
export async function loadCohortAttempts(sql: Sql, queues: readonly string[]): Promise<CohortAttempt[]> {
  if (queues.length === 0) return [];
  const rows = await sql.rows<{
    id: string;
    attempt: number;
    queue: string;
    gpus: number;
    nodes: number;
    started_at: Date | null;
    updated_at: Date;
    last_preempted_at: Date | null;
    preempted_attempt: number | null;
  }>(
    `SELECT id, attempt, queue, gpus, nodes, started_at, updated_at, last_preempted_at, preempted_attempt
     FROM jobs WHERE queue = ANY($1::text[]) AND state = 'RUNNING'`,
    [[...queues]],
  );
  return rows.map((r) => ({
    jobId: r.id,
    attempt: r.attempt,
    queue: r.queue,
    gpus: r.gpus * r.nodes,
    placedAt: (r.started_at ?? r.updated_at).getTime(),
    lastPreemptedAtMs: r.last_preempted_at ? r.last_preempted_at.getTime() : null,
    preempting: r.preempted_attempt !== null,
  }));
}

/**
 * The attempts still stopping for a preemptor: the preemptors they stop for (who wait, and get no
 * new victims) and the nodes they hold (withheld from the plan). Rows of the partial index
 * jobs_preempting: few, and none most of the time.
 */
export async function loadAttemptsStopping(sql: Sql): Promise<{ preemptors: Set<string>; nodes: Set<string> }> {
  const rows = await sql.rows<{ preempted_for: string; node_ids: string[] }>(`SELECT preempted_for, node_ids FROM jobs WHERE preempted_attempt IS NOT NULL`);
  return { preemptors: new Set(rows.map((r) => r.preempted_for)), nodes: new Set(rows.flatMap((r) => r.node_ids ?? [])) };
}

/**
 * Tells each victim's attempt to stop for `preemptorId`, inside the caller's transaction: the job
 * records the attempt, its preemptor and the time (the cooldown counts from it), gets a
 * PREEMPTION_REQUESTED event, and every rank a KILL with the grace. Nothing is released here: each
 * rank keeps its devices until its agent reports it ended (or its node is declared dead), so the
 * preemptor cannot be placed onto devices still in use.
 *
 * Returns false, having written nothing, when the preemptor is no longer QUEUED or already has
 * victims stopping; throws ConcurrentUpdateError (the transaction must roll back) when some victim
 * moved on since it was read (no longer RUNNING that attempt, already stopping, being cancelled).
 * Either way the preemptor is looked at again next cycle. Victims are locked in id order, as every writer does.
 */
export async function requestPreemption(
  sql: Sql,
  preemptorId: string,
  victims: ReadonlyArray<{ jobId: string; attempt: number }>,
  graceMs: number,
  now: Date,
): Promise<boolean> {
  // The preemptor's row first: two scheduler replicas preempting for it at once serialise here, and
  // the second finds it placed, or with victims already stopping for it, and gives up.
  const [preemptor] = await sql.rows(`SELECT 1 FROM jobs WHERE id = $1 AND state = 'QUEUED' FOR UPDATE`, [preemptorId]);
  if (!preemptor) return false;
  const [stopping] = await sql.rows(`SELECT 1 FROM jobs WHERE preempted_for = $1 AND preempted_attempt IS NOT NULL LIMIT 1`, [preemptorId]);
  if (stopping) return false;
  const ordered = [...victims].sort((a, b) => (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0));
  const rows = await sql.rows<{ id: string; attempt: number; last_event_seq: number; node_ids: string[] }>(
    `UPDATE jobs j SET preempted_attempt = v.attempt, preempted_for = $3, last_preempted_at = $4,
       version = j.version + 1, last_event_seq = j.last_event_seq + 1, updated_at = $4
     FROM (SELECT * FROM unnest($1::uuid[], $2::int[]) AS v(id, attempt) ORDER BY id) v
     WHERE j.id = v.id AND j.attempt = v.attempt AND j.state = 'RUNNING' AND j.preempted_attempt IS NULL AND NOT j.cancel_requested
     RETURNING j.id, j.attempt, j.last_event_seq, j.node_ids`,
    [ordered.map((v) => v.jobId), ordered.map((v) => v.attempt), preemptorId, now],
  );
  // Some victims are marked already: throwing rolls them back with the rest.
  if (rows.length !== ordered.length) throw new ConcurrentUpdateError(`victims of ${preemptorId}`);
  await appendEventsOfJobs(
    sql,
    rows.map((r) => ({
      jobId: r.id,
      seq: r.last_event_seq,
      event: {
        type: 'PREEMPTION_REQUESTED',
        at: now,
        attempt: r.attempt,
        nodeIds: r.node_ids,
        reason: `${PREEMPTED}: for job ${preemptorId}, ${graceMs} ms to stop`,
      },
    })),
  );
  await enqueueOutbox(
    sql,
    rows.flatMap((r) =>
      r.node_ids.map((nodeId) => {
        const kill: KillCommand = { type: 'KILL', nodeId, jobId: r.id, attempt: r.attempt, issuedAt: now.getTime(), reason: PREEMPTED, graceMs };
        return { topic: TOPICS.agentCommands, key: nodeId, value: kill };
      }),
    ),
  );
  return true;
}
