import { JobRecord, NewJob, findJobs, insertCreatedJobs } from './job-rows';
import { KeyClaimRequest, claimIdempotencyKeys, findIdempotencyKeys, keyOf } from './idempotency-keys';
import { OutboxMessage } from './outbox';
import { Sql } from './sql';

export interface JobCreation {
  job: NewJob;
  /** The JOB_CREATED message, written to the outbox with the job. */
  message: OutboxMessage;
  idempotency: { key: string; bodySha256: string } | null;
}

export type JobCreationOutcome =
  | { kind: 'created'; job: JobRecord }
  /** An earlier request with the same key and body created `job`. */
  | { kind: 'replayed'; job: JobRecord }
  /** The key was used before with another body. */
  | { kind: 'key-mismatch' }
  | { kind: 'unknown-queue' };

/**
 * Creates a batch of jobs in the caller's transaction: idempotency keys claimed, then every job with
 * its CREATED event and outbox message in one statement. A batch costs a handful of round trips and
 * one commit however many jobs it holds. Requests must not share an (owner, key) pair. The outcomes
 * come back in request order.
 */
export async function createJobs(sql: Sql, requests: JobCreation[], now: Date, keyTtlMs: number): Promise<JobCreationOutcome[]> {
  const queues = new Set(
    (await sql.rows<{ name: string }>(`SELECT name FROM queues WHERE name = ANY($1::text[])`, [[...new Set(requests.map((r) => r.job.queue))]]))
      .map((r) => r.name),
  );
  // A request for an unknown queue claims nothing (a key may not point at a job that was never written).
  const claims: KeyClaimRequest[] = requests
    .filter((r) => r.idempotency && queues.has(r.job.queue))
    .map((r) => ({ owner: r.job.owner, key: r.idempotency!.key, bodySha256: r.idempotency!.bodySha256, jobId: r.job.id }));
  const claimed = await claimIdempotencyKeys(sql, claims, now, keyTtlMs);
  const keyed = requests.filter((r) => r.idempotency);
  const holdsKey = (r: JobCreation) => claimed.has(keyOf(r.job.owner, r.idempotency!.key));
  const stored = await findIdempotencyKeys(sql, keyed.filter((r) => !holdsKey(r)).map((r) => ({ owner: r.job.owner, key: r.idempotency!.key })));
  const earlierJobs = new Map((await findJobs(sql, [...new Set([...stored.values()].map((s) => s.jobId))])).map((j) => [j.id, j]));

  const toCreate = requests.filter((r) => queues.has(r.job.queue) && (!r.idempotency || holdsKey(r)));
  const created = new Map((await insertCreatedJobs(sql, toCreate)).map((j) => [j.id, j]));

  return requests.map((r): JobCreationOutcome => {
    const job = created.get(r.job.id);
    if (job) return { kind: 'created', job };
    const earlier = r.idempotency ? stored.get(keyOf(r.job.owner, r.idempotency.key)) : undefined;
    if (earlier) {
      if (earlier.bodySha256 !== r.idempotency!.bodySha256) return { kind: 'key-mismatch' };
      return { kind: 'replayed', job: earlierJobs.get(earlier.jobId)! };
    }
    return { kind: 'unknown-queue' };
  });
}
