import type { JobState } from '@gantry/domain';
import { Sql } from './sql';

export interface JobDependencyRow {
  jobId: string;
  dependsOn: string;
  condition: 'succeeded' | 'finished';
}

/**
 * The jobs a new job will depend on, locked until the caller's transaction ends (in id order, so
 * two creations naming the same jobs cannot wait on each other in a cycle): none of them can end
 * meanwhile, and the state read is the latest committed one. Call inside a transaction.
 */
export async function lockUpstreamJobs(sql: Sql, ids: readonly string[]): Promise<Array<{ id: string; owner: string; state: JobState }>> {
  if (ids.length === 0) return [];
  return sql.rows(`SELECT id, owner, state FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`, [[...ids]]);
}

/**
 * Records a created job's dependencies and marks the jobs it names as having dependents (which arms
 * the end-of-job trigger for them, migration AddJobDependencies). In the transaction that locked
 * them (lockUpstreamJobs), so none ended in between.
 */
export async function insertJobDependencies(sql: Sql, rows: readonly JobDependencyRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql.rows(
    `WITH d AS (
       INSERT INTO job_dependencies (job_id, depends_on, condition)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[]) ON CONFLICT DO NOTHING
       RETURNING depends_on)
     UPDATE jobs SET has_dependents = true WHERE id IN (SELECT depends_on FROM d) AND NOT has_dependents`,
    [rows.map((r) => r.jobId), rows.map((r) => r.dependsOn), rows.map((r) => r.condition)],
  );
}

/** What each of `jobIds` depends on, for the job resource (`dependsOn`), upstream ids ascending; a job with none is absent. */
export async function listJobDependencies(
  sql: Sql,
  jobIds: readonly string[],
): Promise<Map<string, Array<{ jobId: string; condition: JobDependencyRow['condition'] }>>> {
  const out = new Map<string, Array<{ jobId: string; condition: JobDependencyRow['condition'] }>>();
  if (jobIds.length === 0) return out;
  const rows = await sql.rows<{ job_id: string; depends_on: string; condition: JobDependencyRow['condition'] }>(
    `SELECT job_id, depends_on, condition FROM job_dependencies WHERE job_id = ANY($1::uuid[]) ORDER BY job_id, depends_on`,
    [[...jobIds]],
  );
  for (const r of rows) out.set(r.job_id, [...(out.get(r.job_id) ?? []), { jobId: r.depends_on, condition: r.condition }]);
  return out;
}
