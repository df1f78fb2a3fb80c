import { Client } from 'pg';
import { JobState, decideTransition, isTerminal } from '@gantry/domain';
import { withDb } from '@gantry/stack';
import { SubmitRecord } from './load-generator';
import { OverloadRecord } from './overload';
import { FORGED_EXIT_CODE, FORGED_NODE_PREFIX, FORGED_REASON } from './poison';

/** One invariant checked against the database once the stack has drained. */
export interface InvariantResult {
  name: string;
  ok: boolean;
  violations: number;
  detail: string;
  /** A few offending ids or rows, for a bug report. */
  examples: string[];
}

const result = (name: string, bad: string[], detail: string): InvariantResult => ({
  name,
  ok: bad.length === 0,
  violations: bad.length,
  detail,
  examples: bad.slice(0, 10),
});

/**
 * 1. Every job the gateway accepted exists, once, under the key it was submitted with; no job exists
 * that nobody submitted (`others`: owners whose jobs another part of the run accounts for).
 */
async function acceptedJobsExistOnce(c: Client, records: SubmitRecord[], owner: string, others: string[]): Promise<InvariantResult[]> {
  const accepted = records.filter((r) => r.jobId);
  const unknownKeys = new Set(records.filter((r) => !r.jobId).map((r) => r.key));
  const { rows: jobs } = await c.query<{ id: string; key: string | null }>(
    `SELECT j.id, k.key FROM jobs j LEFT JOIN idempotency_keys k ON k.job_id = j.id AND k.owner = $1 WHERE j.owner = $1`,
    [owner],
  );
  const { rows: strangers } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE owner <> $1 AND NOT owner = ANY($2::text[])`, [
    owner,
    others,
  ]);
  const byId = new Map(jobs.map((j) => [j.id, j.key]));
  const missing = accepted.filter((r) => !byId.has(r.jobId!)).map((r) => `${r.jobId} (key ${r.key}, answered ${r.status})`);
  const wrongKey = accepted.filter((r) => byId.has(r.jobId!) && byId.get(r.jobId!) !== r.key).map((r) => `${r.jobId}: key ${r.key}, db ${byId.get(r.jobId!)}`);
  const acceptedIds = new Set(accepted.map((r) => r.jobId!));
  const dupIds = accepted.length - acceptedIds.size;
  const unasked = jobs.filter((j) => !acceptedIds.has(j.id) && !(j.key && unknownKeys.has(j.key))).map((j) => `${j.id} (key ${j.key})`);
  const createdUnanswered = jobs.filter((j) => !acceptedIds.has(j.id) && j.key && unknownKeys.has(j.key)).length;
  return [
    result('accepted jobs exist', missing, `${accepted.length} accepted, ${missing.length} missing from the database`),
    result(
      'one job per idempotency key',
      [...wrongKey, ...(dupIds ? [`${dupIds} answers named a job another key had`] : [])],
      `${jobs.length} jobs in the database for ${acceptedIds.size} accepted ids; ${createdUnanswered} created whose answer the client never got (allowed)`,
    ),
    result(
      'no job nobody submitted',
      [...unasked, ...(strangers[0].n ? [`${strangers[0].n} jobs of another owner`] : [])],
      `${unasked.length} jobs without an accepted or unanswered create`,
    ),
  ];
}

/** 2. Every job rests in a terminal state, reached by legal steps that its event history records exactly once each. */
async function statesAndHistories(c: Client): Promise<InvariantResult[]> {
  const { rows: jobs } = await c.query<{ id: string; state: JobState; last_event_seq: number; cancel_requested: boolean; reason: string | null }>(
    `SELECT id, state, last_event_seq, cancel_requested, reason FROM jobs`,
  );
  const { rows: events } = await c.query<{ job_id: string; seq: number; type: string; from_state: JobState | null; to_state: JobState | null }>(
    `SELECT job_id, seq, type, from_state, to_state FROM job_events ORDER BY job_id, seq`,
  );
  const byJob = new Map<string, typeof events>();
  for (const e of events) {
    let list = byJob.get(e.job_id);
    if (!list) byJob.set(e.job_id, (list = []));
    list.push(e);
  }
  const stuck: string[] = [];
  const badHistory: string[] = [];
  const unexpectedCancel: string[] = [];
  for (const j of jobs) {
    if (!isTerminal(j.state)) stuck.push(`${j.id} ${j.state}`);
    if (j.state === 'CANCELLED' && !j.cancel_requested) unexpectedCancel.push(`${j.id} (${j.reason})`);
    const list = byJob.get(j.id) ?? [];
    const why: string[] = [];
    if (list.length !== j.last_event_seq || list.some((e, i) => e.seq !== i + 1))
      why.push(`seqs ${list.map((e) => e.seq).join(',')} vs last ${j.last_event_seq}`);
    if (list[0]?.type !== 'CREATED') why.push('first event is not CREATED');
    let state: JobState = 'QUEUED';
    for (const e of list.filter((x) => x.type === 'STATE_CHANGED')) {
      const d = decideTransition(state, e.to_state!);
      if (e.from_state !== state || d.kind !== 'apply') why.push(`seq ${e.seq}: ${e.from_state}->${e.to_state} after ${state}`);
      state = e.to_state!;
    }
    if (state !== j.state) why.push(`history ends in ${state}, row says ${j.state}`);
    if (why.length) badHistory.push(`${j.id}: ${why.join('; ')}`);
  }
  const byState: Record<string, number> = {};
  for (const j of jobs) {
    const k = j.state === 'SUCCEEDED' ? j.state : `${j.state}${j.reason ? ` ${j.reason}` : ''}`;
    byState[k] = (byState[k] ?? 0) + 1;
  }
  return [
    result(
      'every job terminal (none stuck)',
      stuck,
      Object.entries(byState)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', '),
    ),
    result('history matches state', badHistory, `${jobs.length} jobs, ${events.length} events: seqs 1..n without gaps, legal transitions, last one = row`),
    result('no cancel nobody asked for', unexpectedCancel, `${unexpectedCancel.length} CANCELLED without a cancel request`),
  ];
}

/** 3. None ran twice, as the database records it: one well-formed placement per attempt, attempts never overlapping. */
async function placements(c: Client): Promise<InvariantResult[]> {
  const malformed = await c.query<{ job_id: string; attempt: number; ranks: number; nodes: number; current: number }>(
    `SELECT a.job_id, a.attempt, count(*)::int AS ranks, j.nodes, j.attempt AS current FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id
     GROUP BY a.job_id, a.attempt, j.nodes, j.attempt
     HAVING count(*) <> j.nodes OR min(a.rank) <> 0 OR max(a.rank) <> j.nodes - 1 OR count(DISTINCT a.node_id) <> j.nodes OR a.attempt > j.attempt OR a.attempt < 1`,
  );
  const missingAttempts = await c.query<{ id: string; attempt: number; placed: number }>(
    `SELECT j.id, j.attempt, count(DISTINCT a.attempt)::int AS placed FROM jobs j LEFT JOIN attempt_nodes a ON a.job_id = j.id
     GROUP BY j.id, j.attempt HAVING count(DISTINCT a.attempt) <> j.attempt`,
  );
  // Attempt b began while an earlier attempt a of the same job still held a rank (unreleased, or released after b was placed).
  const overlapping = await c.query<{ job_id: string; a: number; b: number; released: Date | null; placed: Date }>(
    `WITH per AS (
       SELECT job_id, attempt, min(created_at) AS placed, max(released_at) AS released, bool_or(released_at IS NULL) AS live
       FROM attempt_nodes GROUP BY job_id, attempt)
     SELECT x.job_id, x.attempt AS a, y.attempt AS b, x.released, y.placed FROM per x JOIN per y ON y.job_id = x.job_id AND y.attempt > x.attempt
     WHERE x.live OR x.released > y.placed`,
  );
  const liveAtRest = await c.query<{ job_id: string; attempt: number; node_id: string; state: string; job_state: string; current: number }>(
    `SELECT a.job_id, a.attempt, a.node_id, a.state, j.state AS job_state, j.attempt AS current FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id
     WHERE a.released_at IS NULL AND (j.state IN ('SUCCEEDED', 'FAILED', 'CANCELLED') OR a.attempt <> j.attempt)`,
  );
  const notSucceeded = await c.query<{ id: string; states: string[] }>(
    `SELECT j.id, array_agg(a.state ORDER BY a.rank) AS states FROM jobs j JOIN attempt_nodes a ON a.job_id = j.id AND a.attempt = j.attempt
     WHERE j.state = 'SUCCEEDED' GROUP BY j.id HAVING bool_or(a.state <> 'SUCCEEDED')`,
  );
  const { rows: attempts } = await c.query<{ n: number; jobs: number; retried: number }>(
    `SELECT count(DISTINCT (job_id, attempt))::int AS n, count(DISTINCT job_id)::int AS jobs, count(DISTINCT job_id) FILTER (WHERE attempt > 1)::int AS retried FROM attempt_nodes`,
  );
  return [
    result(
      'one placement per attempt',
      [
        ...malformed.rows.map((r) => `${r.job_id} attempt ${r.attempt}: ${r.ranks} ranks for ${r.nodes} nodes (current attempt ${r.current})`),
        ...missingAttempts.rows.map((r) => `${r.id}: attempt ${r.attempt} but ${r.placed} placed attempts`),
      ],
      `${attempts[0].n} attempts of ${attempts[0].jobs} jobs (${attempts[0].retried} jobs placed more than once); ranks 0..n-1 on n distinct nodes`,
    ),
    result(
      'no two live attempts of a job',
      overlapping.rows.map(
        (r) => `${r.job_id}: attempt ${r.a} released ${r.released?.toISOString() ?? 'never'}, attempt ${r.b} placed ${r.placed.toISOString()}`,
      ),
      'every earlier attempt fully released before the next was placed',
    ),
    result(
      'nothing held at rest',
      liveAtRest.rows.map((r) => `${r.job_id} attempt ${r.attempt} on ${r.node_id} rank ${r.state}, job ${r.job_state} attempt ${r.current}`),
      'no unreleased rank of a finished job or a past attempt',
    ),
    result(
      'SUCCEEDED means every rank succeeded',
      notSucceeded.rows.map((r) => `${r.id}: ranks ${r.states.join(',')}`),
      'current attempt of each SUCCEEDED job',
    ),
  ];
}

/** 4. Each node's allocation columns equal the sum over its live (unreleased) ranks. */
async function accounting(c: Client): Promise<InvariantResult> {
  const { rows } = await c.query<{ id: string; gpus_allocated: number; cpu_allocated: number; memory_allocated: string; g: number; cpu: number; mem: string }>(
    `SELECT n.id, n.gpus_allocated, n.cpu_allocated, n.memory_allocated, coalesce(l.g, 0)::int AS g, coalesce(l.cpu, 0)::int AS cpu, coalesce(l.mem, 0)::bigint AS mem
     FROM nodes n LEFT JOIN (
       SELECT node_id, sum(gpus) AS g, sum(cpu_cores) AS cpu, sum(memory_mib) AS mem FROM attempt_nodes WHERE released_at IS NULL GROUP BY node_id) l
     ON l.node_id = n.id
     WHERE n.gpus_allocated <> coalesce(l.g, 0) OR n.cpu_allocated <> coalesce(l.cpu, 0) OR n.memory_allocated <> coalesce(l.mem, 0)`,
  );
  const { rows: n } = await c.query<{ n: number; live: number }>(
    `SELECT (SELECT count(*)::int FROM nodes) AS n, (SELECT count(*)::int FROM attempt_nodes WHERE released_at IS NULL) AS live`,
  );
  return result(
    'node accounting = live ranks',
    rows.map((r) => `${r.id}: gpus ${r.gpus_allocated}/${r.g} cpu ${r.cpu_allocated}/${r.cpu} mem ${r.memory_allocated}/${r.mem} (column/sum)`),
    `${n[0].n} nodes, ${n[0].live} live ranks; GPUs, cores and memory compared`,
  );
}

/** 5. Nothing the poison fault forged was applied: no job ended with its exit code or reason, no forged node was registered. */
async function noForgeryApplied(c: Client): Promise<InvariantResult> {
  const { rows: jobs } = await c.query<{ id: string }>(
    `SELECT DISTINCT j.id FROM jobs j LEFT JOIN job_events e ON e.job_id = j.id
     WHERE j.exit_code = $1 OR j.reason = $2 OR e.reason LIKE '%' || $2 || '%'`,
    [FORGED_EXIT_CODE, FORGED_REASON],
  );
  const { rows: nodes } = await c.query<{ id: string }>(`SELECT id FROM nodes WHERE id LIKE $1`, [`${FORGED_NODE_PREFIX}%`]);
  return result(
    'no forged message applied',
    [...jobs.map((j) => `job ${j.id}`), ...nodes.map((n) => `node ${n.id}`)],
    'forged reports, commands and beats (the poison fault) changed no job and registered no node',
  );
}

const isRefusal = (status: number | null) => status === 429 || status === 503;
const isAccepted = (status: number | null) => status !== null && status >= 200 && status < 300;

/** The overload fault's creates as the load's records, so that the job checks above cover them too. */
function asSubmitRecords(overload: OverloadRecord[]): SubmitRecord[] {
  return overload.map((r) => ({
    key: r.key,
    nodes: 1,
    startedAt: r.dueAtMs,
    endedAt: r.dueAtMs + (r.latencyMs ?? 0),
    outcome: isAccepted(r.status) ? 'accepted' : r.status !== null && r.status < 500 && !isRefusal(r.status) ? 'rejected' : 'failed',
    ...(r.jobId && isAccepted(r.status) ? { jobId: r.jobId } : {}),
    ...(r.status !== null ? { status: r.status } : {}),
  }));
}

/** 6. Overload: the excess is refused with 429/503 (never a 500, never left unanswered), and a refused create created nothing. */
async function overloadRefusals(c: Client, overload: OverloadRecord[], owner: string): Promise<InvariantResult[]> {
  const bad = overload.filter((r) => !isAccepted(r.status) && !isRefusal(r.status)).map((r) => `${r.key}: ${r.status ?? `no answer (${r.failure})`}`);
  const refused = overload.filter((r) => isRefusal(r.status)).map((r) => r.key);
  const { rows } = await c.query<{ key: string; job_id: string }>(`SELECT key, job_id FROM idempotency_keys WHERE owner = $1 AND key = ANY($2::text[])`, [
    owner,
    refused,
  ]);
  const counts: Record<string, number> = {};
  for (const r of overload) {
    const k = r.status === null ? `no answer ${r.failure}` : String(r.status);
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return [
    result(
      'overload: excess refused with 429/503',
      bad,
      `${overload.length} creates offered: ${Object.entries(counts)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')}`,
    ),
    result(
      'overload: a refused create created nothing',
      rows.map((r) => `${r.key} -> job ${r.job_id}`),
      `${refused.length} refused creates, none with a job under its key`,
    ),
  ];
}

export async function checkInvariants(
  databaseUrl: string,
  loadRecords: SubmitRecord[],
  owner: string,
  overload: OverloadRecord[] = [],
  otherOwners: string[] = [],
): Promise<InvariantResult[]> {
  const records = [...loadRecords, ...asSubmitRecords(overload)];
  return withDb(databaseUrl, async (c) => [
    ...(await acceptedJobsExistOnce(c, records, owner, otherOwners)),
    ...(await statesAndHistories(c)),
    ...(await placements(c)),
    await accounting(c),
    await noForgeryApplied(c),
    ...(overload.length ? await overloadRefusals(c, overload, owner) : []),
  ]);
}
