/** A run's holdings and waits read back from Postgres (attempt_nodes, jobs) at its cut-off. */
import { Client } from 'pg';
import { JOB_NAME_PREFIX } from './replay';
import { Holding, JobWait } from './timeline';

export interface RunTimeline {
  holdings: Holding[];
  waits: JobWait[];
  /** Jobs by state at the cut-off. */
  states: Record<string, number>;
  /** Attempts after the first (preemptions, lost attempts). */
  retries: number;
  fleetGpus: number;
}

const ms = (col: string) => `(extract(epoch FROM ${col}) * 1000)::float8`;

export async function readTimeline(db: Client): Promise<RunTimeline> {
  const holdings = (
    await db.query(
      `
    SELECT j.queue AS team, a.gpus, ${ms('a.created_at')} AS start_ms, ${ms('a.released_at')} AS end_ms
    FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id WHERE j.name LIKE $1 AND a.gpus > 0`,
      [`${JOB_NAME_PREFIX}%`],
    )
  ).rows.map((r) => ({ team: r.team as string, gpus: Number(r.gpus), startMs: Number(r.start_ms), endMs: r.end_ms === null ? null : Number(r.end_ms) }));
  const waits = (
    await db.query(
      `
    SELECT j.queue AS team, ${ms('j.created_at')} AS submit_ms,
      (SELECT ${ms('min(a.created_at)')} FROM attempt_nodes a WHERE a.job_id = j.id) AS start_ms
    FROM jobs j WHERE j.name LIKE $1`,
      [`${JOB_NAME_PREFIX}%`],
    )
  ).rows.map((r) => ({ team: r.team as string, submitMs: Number(r.submit_ms), startMs: r.start_ms === null ? null : Number(r.start_ms) }));
  const states = Object.fromEntries(
    (await db.query(`SELECT state, count(*)::int AS n FROM jobs WHERE name LIKE $1 GROUP BY state`, [`${JOB_NAME_PREFIX}%`])).rows.map((r) => [r.state, r.n]),
  );
  const retries = Number(
    (
      await db.query(
        `SELECT count(DISTINCT (a.job_id, a.attempt))::int AS n FROM attempt_nodes a JOIN jobs j ON j.id = a.job_id WHERE j.name LIKE $1 AND a.attempt > 1`,
        [`${JOB_NAME_PREFIX}%`],
      )
    ).rows[0].n,
  );
  const fleetGpus = Number((await db.query(`SELECT coalesce(sum(gpus_total), 0)::int AS n FROM nodes`)).rows[0].n);
  return { holdings, waits, states, retries, fleetGpus };
}
