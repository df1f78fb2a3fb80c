import { HeldInterval, UsageCell, UsageGranularity, UsageGroupKey, UsageRange, UsageReportBuilder, decayUsage, decayedGpuSeconds } from '@gantry/domain';
import { Sql } from './sql';

/**
 * The usage ledger (contract 5.4, ADR 0037): records written where ranks are released
 * (job-report-writes, releaseRank), folded by one writer into the hourly rollup and fair share,
 * read back as reports, and swept after GANTRY_USAGE_RETENTION_DAYS.
 */

/**
 * The GPU model a released rank's record carries, over `f` (the rank), `j` (its job) and `n` (its
 * node, gone if deleted): its node's, else the one its job asked for; '' for a rank without GPUs.
 */
export const USAGE_GPU_MODEL = `CASE WHEN f.gpus > 0 THEN COALESCE(n.gpu_model, j.gpu_model, '') ELSE '' END`;

const NO_MODEL = '';
const toModel = (m: string | null): string | null => (m === null || m === NO_MODEL ? null : m);

interface IntervalRow {
  owner: string;
  queue: string;
  gpu_model: string | null;
  gpus: number;
  cpu_cores: number;
  attempt: number;
  rank: number;
  started_at: Date;
  ended_at: Date | null;
}

const toInterval = (r: IntervalRow, endMs: number): HeldInterval => ({
  owner: r.owner,
  queue: r.queue,
  gpuModel: toModel(r.gpu_model),
  gpus: r.gpus,
  cpuCores: r.cpu_cores,
  attempt: r.attempt,
  rank: r.rank,
  startMs: r.started_at.getTime(),
  endMs,
});

/** What one fold did. */
export interface UsageFolded {
  records: number;
  hours: number;
}

/**
 * Folds up to `limit` records not folded yet, in the caller's transaction: their time into
 * usage_hourly (per UTC hour, owner, queue, GPU model) and their decayed GPU-seconds at `now` into
 * fair_share_usage (what was there decayed from its as_of first), then marks them folded. Meant for
 * one writer at a time (the reconciler's leader); rows another fold has locked are skipped anyway.
 */
export async function foldUsage(sql: Sql, now: Date, halfLifeSeconds: number, limit: number): Promise<UsageFolded> {
  const records = await sql.rows<IntervalRow & { job_id: string; ended_at: Date }>(
    `SELECT job_id, attempt, rank, owner, queue, gpu_model, gpus, cpu_cores, started_at, ended_at FROM usage_records
     WHERE NOT folded ORDER BY ended_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  if (records.length === 0) return { records: 0, hours: 0 };
  const hourly = new UsageReportBuilder({ fromMs: -8.64e15, toMs: 8.64e15, granularity: 'hour', groupBy: ['owner', 'queue', 'gpuModel'] });
  const decayed = new Map<string, { queue: string; owner: string; records: IntervalRow[] }>();
  for (const r of records) {
    hourly.addInterval(toInterval(r, r.ended_at.getTime()));
    const k = JSON.stringify([r.queue, r.owner]);
    if (!decayed.has(k)) decayed.set(k, { queue: r.queue, owner: r.owner, records: [] });
    decayed.get(k)!.records.push(r);
  }
  const cells = hourly.rows();
  await sql.rows(
    `INSERT INTO usage_hourly (hour, owner, queue, gpu_model, gpu_ms, cpu_ms, attempts, jobs)
     SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[])
     ON CONFLICT (hour, owner, queue, gpu_model) DO UPDATE SET gpu_ms = usage_hourly.gpu_ms + excluded.gpu_ms,
       cpu_ms = usage_hourly.cpu_ms + excluded.cpu_ms, attempts = usage_hourly.attempts + excluded.attempts, jobs = usage_hourly.jobs + excluded.jobs`,
    [
      cells.map((c) => new Date(c.start)),
      cells.map((c) => c.owner),
      cells.map((c) => c.queue),
      cells.map((c) => c.gpuModel ?? NO_MODEL),
      cells.map((c) => c.gpuMs),
      cells.map((c) => c.cpuMs),
      cells.map((c) => c.attempts),
      cells.map((c) => c.jobs),
    ],
  );
  await addFairShareUsage(sql, [...decayed.values()], now.getTime(), halfLifeSeconds);
  await sql.rows(
    `UPDATE usage_records u SET folded = true FROM unnest($1::uuid[], $2::int[], $3::int[]) AS k (job_id, attempt, rank)
     WHERE u.job_id = k.job_id AND u.attempt = k.attempt AND u.rank = k.rank`,
    [records.map((r) => r.job_id), records.map((r) => r.attempt), records.map((r) => r.rank)],
  );
  return { records: records.length, hours: cells.length };
}

/** Adds ended ranks' decayed GPU-seconds to fair_share_usage, each pair's stored value decayed to the same instant first. */
async function addFairShareUsage(
  sql: Sql,
  pairs: Array<{ queue: string; owner: string; records: IntervalRow[] }>,
  nowMs: number,
  halfLifeSeconds: number,
): Promise<void> {
  const stored = await sql.rows<{ queue: string; owner: string; gpu_seconds: number; as_of: Date }>(
    `SELECT queue, owner, gpu_seconds, as_of FROM fair_share_usage f JOIN unnest($1::text[], $2::text[]) AS k (q, o) ON f.queue = k.q AND f.owner = k.o
     ORDER BY queue, owner FOR UPDATE OF f`,
    [pairs.map((p) => p.queue), pairs.map((p) => p.owner)],
  );
  const before = new Map(stored.map((s) => [JSON.stringify([s.queue, s.owner]), s]));
  const next = pairs.map((p) => {
    const s = before.get(JSON.stringify([p.queue, p.owner]));
    // Never moved back: a clock behind the stored as_of evaluates everything at as_of instead.
    const at = Math.max(nowMs, s ? s.as_of.getTime() : nowMs);
    let value = s ? decayUsage(Number(s.gpu_seconds), s.as_of.getTime(), at, halfLifeSeconds) : 0;
    for (const r of p.records) value += decayedGpuSeconds(r.gpus, r.started_at.getTime(), r.ended_at!.getTime(), at, halfLifeSeconds);
    return { ...p, value, at };
  });
  await sql.rows(
    `INSERT INTO fair_share_usage (queue, owner, gpu_seconds, as_of)
     SELECT * FROM unnest($1::text[], $2::text[], $3::float8[], $4::timestamptz[])
     ON CONFLICT (queue, owner) DO UPDATE SET gpu_seconds = excluded.gpu_seconds, as_of = excluded.as_of`,
    [next.map((n) => n.queue), next.map((n) => n.owner), next.map((n) => n.value), next.map((n) => new Date(n.at))],
  );
}

const BUCKET_SQL: Record<UsageGranularity, string> = {
  hour: `hour`,
  day: `date_trunc('day', hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
  month: `date_trunc('month', hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
};
const GROUP_SQL: Record<UsageGroupKey, string> = { owner: 'owner', queue: 'queue', gpuModel: 'gpu_model' };

/**
 * A usage report's cells for [range.fromMs, range.toMs), only `owner`'s when given, in one statement
 * so that its three sources are read from one snapshot: each rank is in exactly one of them (the
 * rollup, records not folded yet, ranks still running: the latter counted up to min(to, now)).
 * The range must be whole hours (checkUsageQuery), so whole rollup hours cover it.
 */
export async function loadUsageReport(sql: Sql, range: UsageRange, owner: string | null, now: Date): Promise<UsageCell[]> {
  const bucket = BUCKET_SQL[range.granularity];
  const cols = (['owner', 'queue', 'gpuModel'] as const).map((k) => (range.groupBy.includes(k) ? GROUP_SQL[k] : `NULL::text`));
  const grouped = range.groupBy.map((k) => GROUP_SQL[k]);
  const rows = await sql.rows<IntervalRow & { kind: 'cell' | 'ended' | 'running'; gpu_ms: string; cpu_ms: string; attempts: string; jobs: string }>(
    `SELECT 'cell' AS kind, ${bucket} AS started_at, ${cols[0]} AS owner, ${cols[1]} AS queue, ${cols[2]} AS gpu_model,
       sum(gpu_ms) AS gpu_ms, sum(cpu_ms) AS cpu_ms, sum(attempts) AS attempts, sum(jobs) AS jobs,
       NULL::int AS gpus, NULL::int AS cpu_cores, NULL::int AS attempt, NULL::int AS rank, NULL::timestamptz AS ended_at
     FROM usage_hourly WHERE hour >= $1 AND hour < $2 AND ($3::text IS NULL OR owner = $3)
     GROUP BY ${[bucket, ...grouped].join(', ')}
     UNION ALL
     SELECT 'ended', started_at, owner, queue, gpu_model, NULL, NULL, NULL, NULL, gpus, cpu_cores, attempt, rank, ended_at
     FROM usage_records WHERE NOT folded AND started_at < $2 AND (ended_at > $1 OR started_at >= $1) AND ($3::text IS NULL OR owner = $3)
     UNION ALL
     SELECT 'running', a.created_at, j.owner, j.queue, ${USAGE_GPU_MODEL.replace(/\bf\./g, 'a.')}, NULL, NULL, NULL, NULL, a.gpus, a.cpu_cores, a.attempt, a.rank, NULL
     FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id LEFT JOIN nodes n ON n.id = a.node_id
     WHERE a.released_at IS NULL AND a.created_at < $2 AND ($3::text IS NULL OR j.owner = $3)`,
    [new Date(range.fromMs), new Date(range.toMs), owner],
  );
  const report = new UsageReportBuilder(range);
  const runningEnd = Math.min(range.toMs, now.getTime());
  for (const r of rows) {
    if (r.kind === 'cell') {
      report.addCell({
        start: r.started_at.getTime(),
        owner: r.owner,
        queue: r.queue,
        gpuModel: toModel(r.gpu_model),
        gpuMs: Number(r.gpu_ms),
        cpuMs: Number(r.cpu_ms),
        attempts: Number(r.attempts),
        jobs: Number(r.jobs),
      });
    } else {
      report.addInterval(toInterval(r, r.kind === 'ended' ? r.ended_at!.getTime() : runningEnd));
    }
  }
  return report.rows();
}

/**
 * Deletes up to `batch` records that ended before `cutoff` and are folded, and up to `batch` rollup
 * hours before it; returns how many rows went. Records are never deleted with their jobs: only here.
 */
export async function deleteUsageBefore(sql: Sql, cutoff: Date, batch: number): Promise<number> {
  const [row] = await sql.rows<{ records: string; hours: string }>(
    `WITH records AS (
       DELETE FROM usage_records WHERE ctid IN (SELECT ctid FROM usage_records WHERE ended_at < $1 AND folded LIMIT $2) RETURNING 1
     ), hours AS (
       DELETE FROM usage_hourly WHERE ctid IN (SELECT ctid FROM usage_hourly WHERE hour < date_trunc('hour', $1::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' LIMIT $2) RETURNING 1
     )
     SELECT (SELECT count(*) FROM records) AS records, (SELECT count(*) FROM hours) AS hours`,
    [cutoff, batch],
  );
  return Number(row.records) + Number(row.hours);
}
