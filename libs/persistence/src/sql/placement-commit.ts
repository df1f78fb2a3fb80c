import { appendEventsOfJobs } from './job-events';
import { insertRanks } from './job-rows';
import { casAllocate } from './nodes';
import { OutboxMessage, enqueueOutbox } from './outbox';
import { ConcurrentUpdateError, Sql, textArrayLiteral } from './sql';

export interface PlacementWrite {
  jobId: string;
  /** The job's version when it was planned: the job's compare-and-set. */
  expectedVersion: number;
  /** The attempt this placement starts. */
  attempt: number;
  /** One per rank, in rank order. */
  nodeIds: string[];
  /** What each rank takes from its node. */
  perRank: { gpus: number; cpuCores: number; memoryMiB: number };
  /** The RUN commands, written to the outbox. */
  commands: OutboxMessage[];
}

/**
 * Writes placements in the caller's transaction: the nodes' capacity (casAllocate), each job's
 * QUEUED -> SCHEDULED with a compare-and-set on its version, the attempt ranks, the STATE_CHANGED
 * events and the RUN commands. Five statements however many placements. Throws
 * ConcurrentUpdateError when any node or job changed since it was read; the caller rolls back and
 * retries with fresh state. The jobs must be distinct; several may share a node.
 */
export async function commitPlacements(sql: Sql, placements: PlacementWrite[], nodeVersions: Map<string, number>, now: Date): Promise<void> {
  if (placements.length === 0) return;
  await casAllocate(
    sql,
    placements.flatMap((p) => p.nodeIds.map((nodeId) => ({ nodeId, expectedVersion: nodeVersions.get(nodeId)!, ...p.perRank }))),
    now,
  );
  const scheduled = await sql.rows<{ id: string; last_event_seq: number }>(
    `UPDATE jobs j SET state = 'SCHEDULED', attempt = u.attempt, node_ids = u.node_ids::text[], pending_reason = NULL,
       version = j.version + 1, last_event_seq = j.last_event_seq + 1, updated_at = $5
     FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::text[]) AS u (id, expected, attempt, node_ids)
     WHERE j.id = u.id AND j.version = u.expected AND j.state = 'QUEUED'
     RETURNING j.id, j.last_event_seq`,
    [placements.map((p) => p.jobId), placements.map((p) => p.expectedVersion), placements.map((p) => p.attempt),
     placements.map((p) => textArrayLiteral(p.nodeIds)), now],
  );
  if (scheduled.length !== placements.length) {
    const got = new Set(scheduled.map((r) => r.id));
    throw new ConcurrentUpdateError(`job ${placements.filter((p) => !got.has(p.jobId)).map((p) => p.jobId).join(', ')}`);
  }
  const seqOf = new Map(scheduled.map((r) => [r.id, r.last_event_seq]));
  await insertRanks(sql, placements.flatMap((p) => p.nodeIds.map((nodeId, rank) => ({ jobId: p.jobId, attempt: p.attempt, rank, nodeId, ...p.perRank }))), now);
  await appendEventsOfJobs(sql, placements.map((p) => ({
    jobId: p.jobId, seq: seqOf.get(p.jobId)!,
    event: { type: 'STATE_CHANGED', at: now, fromState: 'QUEUED', toState: 'SCHEDULED', attempt: p.attempt, nodeIds: p.nodeIds },
  })));
  await enqueueOutbox(sql, placements.flatMap((p) => p.commands));
}

/**
 * Like commitPlacements, but a placement that lost a race does not take the others down with it:
 * the chosen nodes (in id order, as casAllocate takes them) and then the jobs (in id order) are
 * locked and checked first, placements whose node or job changed since the plan are left out, and
 * the rest are written in the same transaction, where their compare-and-sets cannot fail. With one
 * scheduler, capacity released on a node while a cycle plans (an attempt ending) used to roll back
 * the whole cycle's transaction and commit its placements one by one: seconds per cycle.
 * A node fails for all its placements: changed version, cordoned, or not room for them all. A
 * node or job locked by another writer counts as changed (SKIP LOCKED) rather than waited for: that
 * writer is about to bump its version, and waiting on the reconciler's release batches cost cycles
 * up to a second under load; the placement is planned again next cycle from fresh state.
 */
export async function commitPlacementsThatHold(
  sql: Sql, placements: PlacementWrite[], nodeVersions: Map<string, number>, now: Date,
): Promise<{ placed: string[]; lost: string[] }> {
  if (placements.length === 0) return { placed: [], lost: [] };
  const nodeIds = [...new Set(placements.flatMap((p) => p.nodeIds))].sort();
  const nodes = new Map(
    (await sql.rows<{ id: string; version: string; cordoned: boolean; gpus: number; cpu: number; mem: string }>(
      `SELECT id, version, cordoned, gpus_total - gpus_allocated AS gpus, cpu_cores - cpu_allocated AS cpu, memory_mib - memory_allocated AS mem
       FROM nodes WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE SKIP LOCKED`,
      [nodeIds],
    )).map((r) => [r.id, r]),
  );
  const jobs = new Map(
    (await sql.rows<{ id: string; version: string; state: string }>(
      `SELECT id, version, state FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE SKIP LOCKED`,
      [[...new Set(placements.map((p) => p.jobId))].sort()],
    )).map((r) => [r.id, r]),
  );
  const demand = new Map<string, { gpus: number; cpu: number; mem: number }>();
  for (const p of placements) {
    for (const id of p.nodeIds) {
      const d = demand.get(id) ?? { gpus: 0, cpu: 0, mem: 0 };
      demand.set(id, { gpus: d.gpus + p.perRank.gpus, cpu: d.cpu + p.perRank.cpuCores, mem: d.mem + p.perRank.memoryMiB });
    }
  }
  const nodeHolds = (id: string) => {
    const n = nodes.get(id);
    const d = demand.get(id)!;
    return n !== undefined && Number(n.version) === nodeVersions.get(id) && !n.cordoned && d.gpus <= n.gpus && d.cpu <= n.cpu && d.mem <= Number(n.mem);
  };
  const holding = new Set(nodeIds.filter(nodeHolds));
  const jobHolds = (p: PlacementWrite) => {
    const j = jobs.get(p.jobId);
    return j !== undefined && Number(j.version) === p.expectedVersion && j.state === 'QUEUED';
  };
  const winners = placements.filter((p) => jobHolds(p) && p.nodeIds.every((id) => holding.has(id)));
  await commitPlacements(sql, winners, nodeVersions, now);
  const placed = new Set(winners.map((p) => p.jobId));
  return { placed: [...placed], lost: placements.filter((p) => !placed.has(p.jobId)).map((p) => p.jobId) };
}

