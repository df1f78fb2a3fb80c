import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Job dependencies (ADR 0023).
 *
 * - `job_dependencies`: one row per (dependent, upstream) with its condition; indexed by upstream,
 *   which is how it is read (when a job ends, which jobs wait for it).
 * - `jobs.deps_pending`: how many of the job's dependencies are not met yet. The scheduler reads only
 *   queued jobs with none pending: `jobs_queued_by_queue` is rebuilt with that in its predicate, so
 *   jobs waiting for others cost the scheduler's read nothing, however many there are.
 * - `jobs.has_dependents`: set when a job is first named as a dependency, so that the end-of-job
 *   trigger fires only for such jobs and every other job's end costs nothing more.
 * - `jobs_resolve_dependents`: when a job with dependents reaches a terminal state, in the same
 *   statement, each dependency on it that is now met takes one off its dependent's `deps_pending`,
 *   and each that can never be met ends its (still QUEUED) dependent FAILED, reason
 *   `DEPENDENCY_FAILED`, with its STATE_CHANGED event. That update is itself a job's end, so the
 *   trigger fires again for the dependent's own dependents: failure propagates down a chain within
 *   the one transaction. The rule is dependencyStatus's (libs/domain); job-dependencies.int-spec.ts
 *   checks the two agree on every condition and state.
 */
export class AddJobDependencies1796212057080 implements MigrationInterface {
  name = 'AddJobDependencies1796212057080';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE job_dependencies (
      job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      depends_on uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      condition text NOT NULL CHECK (condition IN ('succeeded', 'finished')),
      PRIMARY KEY (job_id, depends_on))`);
    await q.query(`CREATE INDEX job_dependencies_upstream ON job_dependencies (depends_on)`);
    await q.query(`ALTER TABLE jobs ADD COLUMN deps_pending int NOT NULL DEFAULT 0, ADD COLUMN has_dependents boolean NOT NULL DEFAULT false`);
    await q.query(`DROP INDEX jobs_queued_by_queue`);
    await q.query(`CREATE INDEX jobs_queued_by_queue ON jobs (queue, created_at, id) WHERE state = 'QUEUED' AND deps_pending = 0`);
    await q.query(`
      CREATE FUNCTION jobs_resolve_dependents() RETURNS trigger LANGUAGE plpgsql AS \$\$
      BEGIN
        -- Met: 'finished' by any end, 'succeeded' by SUCCEEDED.
        UPDATE jobs j SET deps_pending = j.deps_pending - m.n,
          pending_reason = CASE WHEN j.deps_pending - m.n = 0 THEN NULL ELSE j.pending_reason END
        FROM (SELECT d.job_id, count(*) AS n FROM job_dependencies d
              WHERE d.depends_on = NEW.id AND (d.condition = 'finished' OR NEW.state = 'SUCCEEDED') GROUP BY d.job_id) m
        WHERE j.id = m.job_id AND j.state = 'QUEUED';
        -- Never met: 'succeeded' by FAILED or CANCELLED. Ends the dependent (which fires this again for its own).
        WITH doomed AS (
          UPDATE jobs j SET state = 'FAILED', reason = 'DEPENDENCY_FAILED', pending_reason = NULL, finished_at = now(),
            updated_at = now(), version = j.version + 1, last_event_seq = j.last_event_seq + 1
          FROM job_dependencies d
          WHERE d.depends_on = NEW.id AND d.condition = 'succeeded' AND NEW.state <> 'SUCCEEDED' AND j.id = d.job_id AND j.state = 'QUEUED'
          RETURNING j.id, j.last_event_seq, j.attempt)
        INSERT INTO job_events (job_id, seq, type, at, from_state, to_state, attempt, reason)
        SELECT id, last_event_seq, 'STATE_CHANGED', now(), 'QUEUED', 'FAILED', attempt, 'DEPENDENCY_FAILED: job ' || NEW.id || ' ended ' || NEW.state
        FROM doomed;
        RETURN NULL;
      END \$\$`);
    await q.query(`CREATE TRIGGER jobs_resolve_dependents AFTER UPDATE OF state ON jobs FOR EACH ROW
      WHEN (NEW.has_dependents AND OLD.state IS DISTINCT FROM NEW.state AND NEW.state IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))
      EXECUTE FUNCTION jobs_resolve_dependents()`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER jobs_resolve_dependents ON jobs`);
    await q.query(`DROP FUNCTION jobs_resolve_dependents()`);
    await q.query(`DROP INDEX jobs_queued_by_queue`);
    await q.query(`CREATE INDEX jobs_queued_by_queue ON jobs (queue, created_at, id) WHERE state = 'QUEUED'`);
    await q.query(`ALTER TABLE jobs DROP COLUMN deps_pending, DROP COLUMN has_dependents`);
    await q.query(`DROP TABLE job_dependencies`);
  }
}
