import type { PreemptionPolicy } from '@gantry/domain';
import { Sql, inTransaction } from './sql';
import type { DataSource } from 'typeorm';

export interface QueueRecord {
  name: string;
  priority: number;
  quotaGpus: number | null;
  /** DRF weight (> 0): a queue of weight 2 is entitled to twice the dominant share. */
  weight: number;
  /** Owners whose users may submit to the queue; null: everyone. Operators may always submit. */
  allowedOwners: string[] | null;
  /** Whether its jobs may end running attempts of strictly lower bands (ADR 0026). */
  preemption: PreemptionPolicy;
  /** Whether its attempts share the node's IPC namespace and /dev/shm (ADR 0033). */
  hostIpc: boolean;
  /** Owners' weights inside the queue for decayed fair share (ADR 0038); null: every owner weighs 1. */
  ownerWeights: Record<string, number> | null;
  /** The queue whose cohort it borrows in (ADR 0039); null: a root. */
  parent: string | null;
  /** GPUs it may hold beyond its guarantee out of its siblings' unused guarantee (a child only). */
  borrowingLimitGpus: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface QueueUsage {
  gpusHeld: number;
  jobsQueued: number;
  jobsRunning: number;
}

const toQueue = (r: Record<string, any>): QueueRecord => ({
  name: r.name,
  priority: r.priority,
  quotaGpus: r.quota_gpus,
  weight: Number(r.weight),
  allowedOwners: r.allowed_owners ?? null,
  preemption: r.preemption ?? 'never',
  hostIpc: r.host_ipc === true,
  ownerWeights: r.owner_weights ?? null,
  parent: r.parent ?? null,
  borrowingLimitGpus: r.borrowing_limit_gpus ?? 0,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * Inserts a queue; false when the name is taken (the primary key decides, not a prior read). Its
 * row in queue_gpus_held comes from a trigger. A parent must exist (a foreign key); that the tree
 * stays a tree is the caller's check, under lockQueueTree.
 */
export async function insertQueue(
  sql: Sql,
  q: {
    name: string;
    priority: number;
    quotaGpus: number | null;
    weight?: number;
    allowedOwners?: string[] | null;
    preemption?: PreemptionPolicy;
    hostIpc?: boolean;
    ownerWeights?: Record<string, number> | null;
    parent?: string | null;
    borrowingLimitGpus?: number;
  },
  now: Date,
): Promise<boolean> {
  const rows = await sql.rows(
    `INSERT INTO queues (name, priority, quota_gpus, weight, created_at, updated_at, allowed_owners, preemption, host_ipc, owner_weights, parent, borrowing_limit_gpus)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9::jsonb, $10, $11)
     ON CONFLICT (name) DO NOTHING RETURNING name`,
    [
      q.name,
      q.priority,
      q.quotaGpus,
      q.weight ?? 1,
      now,
      q.allowedOwners ?? null,
      q.preemption ?? 'never',
      q.hostIpc ?? false,
      q.ownerWeights ? JSON.stringify(q.ownerWeights) : null,
      q.parent ?? null,
      q.borrowingLimitGpus ?? 0,
    ],
  );
  return rows.length === 1;
}

export async function findQueue(sql: Sql, name: string): Promise<QueueRecord | null> {
  const [row] = await sql.rows(`SELECT * FROM queues WHERE name = $1`, [name]);
  return row ? toQueue(row) : null;
}

export async function listQueues(sql: Sql): Promise<QueueRecord[]> {
  return (await sql.rows(`SELECT * FROM queues ORDER BY priority DESC, name`)).map(toQueue);
}

export async function updateQueue(
  sql: Sql,
  name: string,
  changes: {
    priority?: number;
    quotaGpus?: number | null;
    weight?: number;
    allowedOwners?: string[] | null;
    preemption?: PreemptionPolicy;
    hostIpc?: boolean;
    ownerWeights?: Record<string, number> | null;
    parent?: string | null;
    borrowingLimitGpus?: number;
  },
  now: Date,
): Promise<QueueRecord | null> {
  const [row] = await sql.rows(
    `UPDATE queues SET priority = COALESCE($2, priority),
       quota_gpus = CASE WHEN $3::boolean THEN $4 ELSE quota_gpus END, weight = COALESCE($6::double precision, weight), updated_at = $5,
       allowed_owners = CASE WHEN $7::boolean THEN $8::text[] ELSE allowed_owners END, preemption = COALESCE($9, preemption),
       host_ipc = COALESCE($10, host_ipc), owner_weights = CASE WHEN $11::boolean THEN $12::jsonb ELSE owner_weights END,
       parent = CASE WHEN $13::boolean THEN $14 ELSE parent END, borrowing_limit_gpus = COALESCE($15::integer, borrowing_limit_gpus)
     WHERE name = $1 RETURNING *`,
    [
      name,
      changes.priority ?? null,
      'quotaGpus' in changes,
      changes.quotaGpus ?? null,
      now,
      changes.weight ?? null,
      'allowedOwners' in changes,
      changes.allowedOwners ?? null,
      changes.preemption ?? null,
      changes.hostIpc ?? null,
      'ownerWeights' in changes,
      changes.ownerWeights ? JSON.stringify(changes.ownerWeights) : null,
      'parent' in changes,
      changes.parent ?? null,
      changes.borrowingLimitGpus ?? null,
    ],
  );
  return row ? toQueue(row) : null;
}

export type QueueDeletion = 'deleted' | 'not-found' | 'not-empty' | 'has-children';

/**
 * Serialises the changes that can reshape the queue tree (a create or update naming a parent, a
 * delete), inside the caller's transaction, so two of them cannot make a cycle or a third level
 * that neither saw: the caller then reads the tree (queueTree), checks it with the change applied,
 * and writes.
 */
export async function lockQueueTree(sql: Sql): Promise<void> {
  await sql.rows(`SELECT pg_advisory_xact_lock(hashtext('gantry.queue-tree'))`);
}

/** Every queue's name and parent. */
export async function queueTree(sql: Sql): Promise<Array<{ name: string; parent: string | null }>> {
  return sql.rows(`SELECT name, parent FROM queues ORDER BY name`);
}

/**
 * Deletes a queue that holds no live job (queued, scheduled or running); finished jobs keep its
 * name. The row lock comes first and waits for creates in flight, which hold a key-share lock on
 * the queue row until they commit (createJobs); the jobs are then read by a later statement, so
 * its snapshot sees every job those creates wrote.
 */
export async function deleteEmptyQueue(ds: DataSource, name: string): Promise<QueueDeletion> {
  return inTransaction(ds, async (sql) => {
    await lockQueueTree(sql);
    const [queue] = await sql.rows(`SELECT name FROM queues WHERE name = $1 FOR UPDATE`, [name]);
    if (!queue) return 'not-found';
    const [child] = await sql.rows(`SELECT 1 FROM queues WHERE parent = $1 LIMIT 1`, [name]);
    if (child) return 'has-children';
    const [live] = await sql.rows(`SELECT 1 FROM jobs WHERE queue = $1 AND state IN ('QUEUED', 'SCHEDULED', 'RUNNING') LIMIT 1`, [name]);
    if (live) return 'not-empty';
    await sql.rows(`DELETE FROM queues WHERE name = $1`, [name]);
    return 'deleted';
  });
}

/**
 * GPUs held by each queue's unreleased ranks (queue_gpus_held, the count its quota is judged and
 * fenced against, ADR 0039) and its job counts.
 */
export async function queueUsage(sql: Sql, names: string[]): Promise<Map<string, QueueUsage>> {
  const rows = await sql.rows<{ queue: string; gpus_held: string; queued: string; running: string }>(
    `SELECT c.queue, c.gpus AS gpus_held,
       (SELECT count(*) FROM jobs j WHERE j.queue = c.queue AND j.state = 'QUEUED') AS queued,
       (SELECT count(*) FROM jobs j WHERE j.queue = c.queue AND j.state IN ('SCHEDULED', 'RUNNING')) AS running
     FROM queue_gpus_held c WHERE c.queue = ANY($1::text[])`,
    [names],
  );
  const usage = new Map(names.map((n) => [n, { gpusHeld: 0, jobsQueued: 0, jobsRunning: 0 }]));
  for (const r of rows) usage.set(r.queue, { gpusHeld: Number(r.gpus_held), jobsQueued: Number(r.queued), jobsRunning: Number(r.running) });
  return usage;
}

export interface QueueHoldings {
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
}

/** What each queue's placed and running jobs hold now (a gang counts every node). */
export async function queueHoldings(sql: Sql): Promise<Map<string, QueueHoldings>> {
  const rows = await sql.rows<{ queue: string; gpus: string; cpu: string; mem: string }>(
    `SELECT queue, SUM(gpus * nodes) AS gpus, SUM(cpu_cores * nodes) AS cpu, SUM(memory_mib * nodes) AS mem
     FROM jobs WHERE state IN ('SCHEDULED', 'RUNNING') GROUP BY queue`,
  );
  return new Map(rows.map((r) => [r.queue, { gpus: Number(r.gpus), cpuCores: Number(r.cpu), memoryMiB: Number(r.mem) }]));
}

/**
 * The GPUs each queue's unreleased ranks hold, as the placement commit and the releases keep them
 * (queue_gpus_held, ADR 0039): exact as of the read, one row per queue.
 */
export async function queueGpusHeld(sql: Sql): Promise<Map<string, number>> {
  const rows = await sql.rows<{ queue: string; gpus: string }>(`SELECT queue, gpus FROM queue_gpus_held`);
  return new Map(rows.map((r) => [r.queue, Number(r.gpus)]));
}

/** Of the queues named, those whose attempts share the node's IPC (ADR 0033): read when RUNs are built. */
export async function hostIpcQueues(sql: Sql, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set();
  const rows = await sql.rows<{ name: string }>(`SELECT name FROM queues WHERE host_ipc AND name = ANY($1::text[])`, [[...new Set(names)]]);
  return new Set(rows.map((r) => r.name));
}
