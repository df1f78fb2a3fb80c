import { FairShareStanding, decayUsage, runningDecayedGpuSeconds } from '@gantry/domain';
import { Sql } from './sql';

/** Per queue, per owner: decayed GPU-seconds up to now and GPUs held now (ADR 0038). */
export type FairShareStandings = Map<string, Map<string, FairShareStanding>>;

/** 2^-1000 is far below anything that counts, and keeps power() clear of Postgres's underflow error. */
const MAX_HALF_LIVES = 1000;

// 2^(-age/halfLife) of a timestamp column, clamped (see MAX_HALF_LIVES). $1 now, $2 half-life s, $3 the clamp.
const weightOf = (column: string) =>
  `power(2::float8, -LEAST($3::float8, GREATEST(0, EXTRACT(EPOCH FROM ($1::timestamptz - ${column}))::float8 / $2::float8)))`;

// One statement, so one snapshot: the usage fold moves records from `usage_records` (not folded) into
// `fair_share_usage` in one transaction, and a release moves a rank from `attempt_nodes` (live) into
// `usage_records` in one statement; read apart, either move could count a rank twice or not at all.
const STANDINGS = `
  SELECT 'ended' AS kind, queue, owner, gpu_seconds AS a, 0::float8 AS b, as_of FROM fair_share_usage
  UNION ALL
  SELECT 'unfolded', queue, owner, SUM(gpus * ${weightOf('ended_at')}), SUM(gpus * ${weightOf('started_at')}), NULL
    FROM usage_records WHERE NOT folded AND gpus > 0 GROUP BY queue, owner
  UNION ALL
  SELECT 'live', queue, owner, SUM(gpus), SUM(gpus * ${weightOf('created_at')}), NULL
    FROM attempt_nodes WHERE released_at IS NULL AND gpus > 0 GROUP BY queue, owner`;

/**
 * Every queue's and owner's fair-share standing at `nowMs`: what fair_share_usage holds of ended
 * ranks (folded by the usage ledger, ADR 0037), decayed from its as_of to now; ended ranks not folded
 * yet; and every live rank's decayed GPU-seconds from its placement (attempt_nodes.created_at, the
 * start the ledger records too) to now, with the GPUs live ranks hold. Ranks are summed in Postgres
 * as sum(gpus x 2^(-age/halfLife)) at their ends, which give their closed-form decayed usage exactly
 * (decayedGpuSeconds), without a row per rank.
 */
export async function loadFairShareStandings(sql: Sql, nowMs: number, halfLifeSeconds: number): Promise<FairShareStandings> {
  const rows = await sql.rows<{ kind: 'ended' | 'unfolded' | 'live'; queue: string; owner: string; a: number; b: number; as_of: Date | null }>(STANDINGS, [
    new Date(nowMs),
    halfLifeSeconds,
    MAX_HALF_LIVES,
  ]);
  const out: FairShareStandings = new Map();
  const add = (queue: string, owner: string, s: FairShareStanding) => {
    const owners = out.get(queue) ?? new Map<string, FairShareStanding>();
    const was = owners.get(owner) ?? { usage: 0, gpus: 0 };
    owners.set(owner, { usage: was.usage + s.usage, gpus: was.gpus + s.gpus });
    out.set(queue, owners);
  };
  for (const r of rows) {
    const [a, b] = [Number(r.a), Number(r.b)];
    if (r.kind === 'ended') add(r.queue, r.owner, { usage: decayUsage(a, r.as_of!.getTime(), nowMs, halfLifeSeconds), gpus: 0 });
    // Each ended rank: gpus * hl / ln2 * (2^(-age(end)/hl) - 2^(-age(start)/hl)).
    else if (r.kind === 'unfolded') add(r.queue, r.owner, { usage: Math.max(0, ((a - b) * halfLifeSeconds) / Math.LN2), gpus: 0 });
    else add(r.queue, r.owner, { usage: runningDecayedGpuSeconds(a, b, halfLifeSeconds), gpus: a });
  }
  return out;
}

/** A queue's decayed usage: its owners' summed. */
export function queueUsageOf(standings: FairShareStandings, queue: string): number {
  let usage = 0;
  for (const s of standings.get(queue)?.values() ?? []) usage += s.usage;
  return usage;
}

/** Most queued jobs of one queue read to find which owners wait there (explain is advice: a bound, not a census). */
export const WAITING_OWNERS_SCAN_MAX = 10_000;

/**
 * Who competes for capacity as it frees (explain's FAIR_SHARE): the queues with placeable queued
 * jobs, and the owners of `queue`'s oldest WAITING_OWNERS_SCAN_MAX placeable queued jobs.
 */
export async function loadFairShareWaiting(sql: Sql, queue: string): Promise<{ queues: Set<string>; owners: Set<string> }> {
  const [queues, owners] = await Promise.all([
    sql.rows<{ name: string }>(
      `SELECT q.name FROM queues q WHERE EXISTS (
         SELECT 1 FROM jobs j WHERE j.queue = q.name AND j.state = 'QUEUED' AND j.deps_pending = 0 AND j.array_size IS NULL)`,
    ),
    sql.rows<{ owner: string }>(
      `SELECT DISTINCT owner FROM (
         SELECT owner FROM jobs WHERE queue = $1 AND state = 'QUEUED' AND deps_pending = 0 AND array_size IS NULL ORDER BY created_at, id LIMIT $2) j`,
      [queue, WAITING_OWNERS_SCAN_MAX],
    ),
  ]);
  return { queues: new Set(queues.map((r) => r.name)), owners: new Set(owners.map((r) => r.owner)) };
}
