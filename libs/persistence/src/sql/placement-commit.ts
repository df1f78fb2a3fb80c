import type { PlacementFence } from '@gantry/domain';
import { OutboxMessage, wakeRelayOnCommit } from './outbox';
import { Sql, intArrayLiteral, prepared, textArrayLiteral } from './sql';

export interface PlacementWrite {
  jobId: string;
  /** The job's version when it was planned: the job's compare-and-set. */
  expectedVersion: number;
  /** The attempt this placement starts. */
  attempt: number;
  /** One per rank, in rank order. */
  nodeIds: string[];
  /** The GPU device indices each rank takes on its node, in rank order (`perRank.gpus` each). */
  gpuIndices: number[][];
  /** What each rank takes from its node. */
  perRank: { gpus: number; cpuCores: number; memoryMiB: number };
  /** Outbox rows written with the placement (the dispatch row from which the RUNs are built). */
  commands: OutboxMessage[];
}

const COMMIT_PLACEMENTS = prepared(`WITH p AS (
       SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::text[], $5::int[], $6::int[], $7::bigint[], $20::text[]) WITH ORDINALITY
         AS t (job_id, expected, attempt, node_ids, gpus, cpu, mem, gpu_indices, ord)
     ), r AS (
       SELECT t.job_id, t.rank, t.node_id, t.devices::int[] AS gpu_indices
       FROM unnest($8::uuid[], $9::int[], $10::text[], $19::text[]) AS t (job_id, rank, node_id, devices)
     ), asked AS (
       SELECT r.node_id, v.version, sum(p.gpus) AS gpus, sum(p.cpu) AS cpu, sum(p.mem) AS mem
       FROM r JOIN p USING (job_id) JOIN unnest($11::text[], $12::bigint[]) AS v (node_id, version) USING (node_id)
       GROUP BY r.node_id, v.version
     ), asked_devices AS (
       SELECT r.node_id, array_agg(d) AS devices FROM r, unnest(r.gpu_indices) AS d GROUP BY r.node_id
     ), node_ok AS MATERIALIZED (
       SELECT n.id FROM nodes n JOIN asked a ON n.id = a.node_id LEFT JOIN asked_devices ad ON ad.node_id = n.id
       WHERE n.version = a.version AND NOT n.cordoned AND n.gpus_total - n.gpus_allocated >= a.gpus
         AND n.cpu_cores - n.cpu_allocated >= a.cpu AND n.memory_mib - n.memory_allocated >= a.mem
         AND (ad.devices IS NULL OR (gantry_int_array_distinct(ad.devices) AND ad.devices <@ n.gpu_indices AND NOT ad.devices && n.gpus_held))
       ORDER BY n.id FOR UPDATE OF n SKIP LOCKED
     ), job_ok AS MATERIALIZED (
       SELECT j.id, j.queue, j.owner FROM jobs j JOIN p ON j.id = p.job_id
       WHERE j.version = p.expected AND j.state = 'QUEUED'
       ORDER BY j.id FOR UPDATE OF j SKIP LOCKED
     ), fits AS MATERIALIZED (
       SELECT p.job_id, p.ord, jo.queue, p.gpus * cardinality(p.node_ids::text[]) AS gpus FROM p JOIN job_ok jo ON jo.id = p.job_id
       WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.job_id = p.job_id AND r.node_id NOT IN (SELECT id FROM node_ok))
     ), lim AS (
       SELECT * FROM unnest($21::text[], $22::bigint[], $23::text[]) AS t (queue, cap, cohort)
     ), held AS MATERIALIZED (
       -- The quota fence (ADR 0039): every queue placed for, and every member of their cohorts,
       -- locked in name order and waited for (the only wait in this statement), so what they hold
       -- is the latest committed count, not this statement's snapshot.
       SELECT c.queue, c.gpus FROM queue_gpus_held c
       WHERE c.queue IN (SELECT queue FROM lim UNION SELECT queue FROM fits)
       ORDER BY c.queue FOR UPDATE OF c
     ), judged AS MATERIALIZED (
       -- In the batch's order, what each placement would bring its queue and its cohort to, counting
       -- those before it that fit their nodes; one past a limit loses, as a lost race does.
       SELECT f.job_id, l.cap, l.cohort, cl.cap AS cohort_cap,
         (SELECT h.gpus FROM held h WHERE h.queue = f.queue) + sum(f.gpus) OVER (PARTITION BY f.queue ORDER BY f.ord) AS queue_after,
         (SELECT sum(h.gpus) FROM held h JOIN lim m ON m.queue = h.queue WHERE m.cohort = l.cohort)
           + sum(f.gpus) OVER (PARTITION BY l.cohort ORDER BY f.ord) AS cohort_after
       FROM fits f LEFT JOIN lim l ON l.queue = f.queue LEFT JOIN unnest($24::text[], $25::bigint[]) AS cl (cohort, cap) ON cl.cohort = l.cohort
     ), winner AS MATERIALIZED (
       SELECT p.* FROM p JOIN judged j ON j.job_id = p.job_id
       WHERE (j.cap IS NULL OR j.queue_after <= j.cap) AND (j.cohort_cap IS NULL OR j.cohort_after <= j.cohort_cap)
     ), queue_took AS (
       UPDATE queue_gpus_held c SET gpus = c.gpus + t.gpus
       FROM (SELECT f.queue, sum(f.gpus) AS gpus FROM fits f JOIN winner w USING (job_id) GROUP BY f.queue) t
       WHERE c.queue = t.queue
     ), allocated AS (
       UPDATE nodes n SET gpus_allocated = n.gpus_allocated + a.gpus, cpu_allocated = n.cpu_allocated + a.cpu,
         memory_allocated = n.memory_allocated + a.mem, version = n.version + 1, updated_at = $13,
         gpus_held = n.gpus_held || COALESCE(a.devices, '{}')
       FROM (
         SELECT s.*, d.devices FROM (SELECT r.node_id, sum(w.gpus) AS gpus, sum(w.cpu) AS cpu, sum(w.mem) AS mem FROM r JOIN winner w USING (job_id) GROUP BY r.node_id) s
         LEFT JOIN (SELECT r.node_id, array_agg(x) AS devices FROM r JOIN winner w USING (job_id), unnest(r.gpu_indices) AS x GROUP BY r.node_id) d USING (node_id)
       ) a
       WHERE n.id = a.node_id
     ), scheduled AS (
       UPDATE jobs j SET state = 'SCHEDULED', attempt = w.attempt, node_ids = w.node_ids::text[], pending_reason = NULL,
         gpu_indices = w.gpu_indices::int[], master_addr = (SELECT address FROM nodes WHERE id = (w.node_ids::text[])[1]),
         version = j.version + 1, last_event_seq = j.last_event_seq + 1, updated_at = $13
       FROM winner w WHERE j.id = w.job_id
       RETURNING j.id, j.last_event_seq, w.attempt, w.node_ids
     ), ranked AS (
       INSERT INTO attempt_nodes (job_id, attempt, rank, node_id, gpus, cpu_cores, memory_mib, gpu_indices, created_at, queue, owner)
       SELECT r.job_id, w.attempt, r.rank, r.node_id, w.gpus, w.cpu, w.mem, r.gpu_indices, $13, jo.queue, jo.owner
       FROM r JOIN winner w USING (job_id) JOIN job_ok jo ON jo.id = r.job_id
     ), evented AS (
       INSERT INTO job_events (job_id, seq, type, at, from_state, to_state, attempt, node_ids)
       SELECT id, last_event_seq, 'STATE_CHANGED', $13, 'QUEUED', 'SCHEDULED', attempt, node_ids::text[] FROM scheduled
     ), commanded AS (
       INSERT INTO outbox (topic, key, value, headers)
       SELECT c.topic, c.key, c.value, c.headers::jsonb
       FROM unnest($14::uuid[], $15::text[], $16::text[], $17::text[], $18::text[]) AS c (job_id, topic, key, value, headers)
       WHERE c.job_id IN (SELECT job_id FROM winner)
       RETURNING id
     )
     SELECT (SELECT array_agg(job_id)::text[] FROM winner) AS placed, (SELECT count(*) FROM commanded) AS commands`);

/**
 * The placement guarantee, in one statement however many placements (one round trip, and locks
 * held only while it runs): the chosen nodes (in id order) and then the jobs (in id order) are
 * locked and checked; a placement holds when its job is still QUEUED at the version it was planned
 * from and every one of its nodes holds. A node holds when its version is the one the plan was made
 * from, it is not cordoned, it has room for every placement on it, and the GPU devices they take
 * are distinct, healthy (in gpu_indices) and held by no live rank (not in gpus_held); otherwise it
 * fails all of them. For the placements that hold, in the same statement: the nodes' capacity and
 * devices taken (gpus_held), each job's
 * QUEUED -> SCHEDULED, the attempt ranks, the STATE_CHANGED events and the outbox rows that dispatch the RUNs. The others
 * are left out and returned as lost, to be planned again from fresh state.
 *
 * A node or job locked by another writer counts as changed (SKIP LOCKED) rather than waited for:
 * that writer is about to bump its version, and waiting on it cost cycles up to a second under
 * load. So the statement waits on no node or job. The jobs must be distinct; several may share a node.
 *
 * Quotas (ADR 0039): each placement adds its GPUs to its queue's row in queue_gpus_held. Those rows
 * (the queues placed for, and every queue `fence` names) are locked in name order and waited for, so
 * their counts are the latest committed, whichever replica wrote them; in the batch's order, a
 * placement that would take its queue past its cap, or its cohort's members together past the
 * cohort's cap, loses as a lost race does. Waiting there cannot deadlock: every other writer of those
 * rows (the releases) takes them last, in name order, and this statement, once it holds them, waits
 * on nothing else.
 */
export async function commitPlacementsThatHold(
  sql: Sql,
  placements: PlacementWrite[],
  nodeVersions: Map<string, number>,
  now: Date,
  fence: PlacementFence = { queues: [], cohorts: [] },
): Promise<{ placed: string[]; lost: string[] }> {
  if (placements.length === 0) return { placed: [], lost: [] };
  const ranks = placements.flatMap((p) =>
    p.nodeIds.map((nodeId, rank) => ({ jobId: p.jobId, rank, nodeId, devices: intArrayLiteral(p.gpuIndices[rank] ?? []) })),
  );
  const nodeIds = [...new Set(ranks.map((r) => r.nodeId))];
  const commands = placements.flatMap((p) => p.commands.map((c) => ({ ...c, jobId: p.jobId })));
  const [row] = await sql.rows<{ placed: string[] | null; commands: string }>(COMMIT_PLACEMENTS, [
    placements.map((p) => p.jobId),
    placements.map((p) => p.expectedVersion),
    placements.map((p) => p.attempt),
    placements.map((p) => textArrayLiteral(p.nodeIds)),
    placements.map((p) => p.perRank.gpus),
    placements.map((p) => p.perRank.cpuCores),
    placements.map((p) => p.perRank.memoryMiB),
    ranks.map((r) => r.jobId),
    ranks.map((r) => r.rank),
    ranks.map((r) => r.nodeId),
    nodeIds,
    nodeIds.map((id) => nodeVersions.get(id)!),
    now,
    commands.map((c) => c.jobId),
    commands.map((c) => c.topic),
    commands.map((c) => c.key),
    commands.map((c) => JSON.stringify(c.value)),
    commands.map((c) => JSON.stringify(c.headers ?? {})),
    ranks.map((r) => r.devices),
    placements.map((p) => intArrayLiteral(p.gpuIndices.flat())),
    fence.queues.map((q) => q.queue),
    fence.queues.map((q) => q.cap),
    fence.queues.map((q) => q.cohort),
    fence.cohorts.map((c) => c.cohort),
    fence.cohorts.map((c) => c.cap),
  ]);
  if (Number(row.commands) > 0) wakeRelayOnCommit(sql);
  const placed = new Set(row.placed ?? []);
  return {
    placed: placements.filter((p) => placed.has(p.jobId)).map((p) => p.jobId),
    lost: placements.filter((p) => !placed.has(p.jobId)).map((p) => p.jobId),
  };
}
