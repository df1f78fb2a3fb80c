import { appendEventsOfJobs } from './job-events';
import { insertRanks } from './job-rows';
import { casAllocate } from './nodes';
import { OutboxMessage, enqueueOutbox } from './outbox';
import { ConcurrentUpdateError, Sql } from './sql';

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

/** A text[] literal: unnest cannot take a ragged 2-D array, so each row's array travels as one. */
function textArrayLiteral(items: string[]): string {
  return `{${items.map((s) => `"${s.replace(/(["\\])/g, '\\$1')}"`).join(',')}}`;
}
