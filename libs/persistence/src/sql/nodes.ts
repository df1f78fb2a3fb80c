import type { DataSource } from 'typeorm';
import type { NodeInventory, NodeTopology } from '@gantry/domain';
import { Sql, inTransaction, intArrayLiteral } from './sql';

/** What a node last reported of its hardware (nodes.reported); the columns placement reads hold what is believed of it (ADR 0035). */
export interface ReportedHardwareRecord {
  gpuModel: string | null;
  gpuIndices: number[];
  cpuCores: number;
  memoryMiB: number;
  address: string | null;
}

/**
 * Durable topology (written when it changes) and allocations (written by placement, with CAS on
 * `version`). Capacity and address are what is believed: the lesser of the pinned inventory and the
 * node's report (ADR 0035); `reported` keeps the report itself.
 */
export interface NodeRecord {
  id: string;
  zone: string;
  rack: string;
  gpuModel: string | null;
  gpusTotal: number;
  cpuCores: number;
  memoryMiB: number;
  /** Device indices of the healthy GPUs of gpuModel (gpusTotal of them). */
  gpuIndices: number[];
  /** Device indices held by unreleased ranks; never one twice (nodes_gpus_held_distinct). */
  gpusHeld: number[];
  /** Where the node listens (heartbeats' address); null when it never said. */
  address: string | null;
  /** The port on address where the node's agent serves attempt logs (heartbeats' logsPort, ADR 0021); null when it never said. */
  logsPort: number | null;
  /** What the node last reported (null for a row written before ADR 0035's migration ran). */
  reported: ReportedHardwareRecord | null;
  gpusAllocated: number;
  cpuAllocated: number;
  memoryAllocated: number;
  cordoned: boolean;
  /** Why it is cordoned: OPERATOR, DRAIN or START_FAILURES; null when it is not. */
  cordonReason: string | null;
  /** Ranks in a row that timed out starting here (reset by a start, and by an uncordon). */
  startFailures: number;
  /** While a drain is pending (ADR 0027): when the reconciler ends what still runs here; null otherwise. */
  drainDeadline: Date | null;
  version: number;
  firstSeenAt: Date;
  updatedAt: Date;
  /** The pinned inventory (ADR 0035; null: none yet), on the reads that join the enrollment: loadNodes, listNodesPage, the cordon and drain writes. */
  declared?: NodeInventory | null;
}

export function toNodeRecord(r: Record<string, any>): NodeRecord {
  return {
    id: r.id,
    zone: r.zone,
    rack: r.rack,
    gpuModel: r.gpu_model,
    gpusTotal: r.gpus_total,
    cpuCores: r.cpu_cores,
    memoryMiB: Number(r.memory_mib),
    gpuIndices: r.gpu_indices ?? [],
    gpusHeld: r.gpus_held ?? [],
    address: r.address ?? null,
    logsPort: r.logs_port ?? null,
    gpusAllocated: r.gpus_allocated,
    cpuAllocated: r.cpu_allocated,
    memoryAllocated: Number(r.memory_allocated),
    cordoned: r.cordoned,
    drainDeadline: r.drain_deadline ?? null,
    version: Number(r.version),
    firstSeenAt: r.first_seen_at,
    updatedAt: r.updated_at,
    reported: r.reported ?? null,
    cordonReason: r.cordon_reason ?? null,
    startFailures: r.start_failures ?? 0,
    ...(r.declared !== undefined ? { declared: r.declared } : {}),
  };
}

/** One node's topology as the nodes table keeps it: what is believed, and the report it came from (ADR 0035). */
export interface TopologyWrite {
  believed: NodeTopology;
  reported: NodeTopology;
}

/** The report as nodes.reported keeps it (the rest of a topology is in the row's own columns). */
export function reportedRecord(t: NodeTopology): {
  gpuModel: string | null;
  gpuIndices: number[];
  cpuCores: number;
  memoryMiB: number;
  address: string | null;
} {
  return { gpuModel: t.gpuModel, gpuIndices: t.gpuIndices, cpuCores: t.cpuCores, memoryMiB: t.memoryMiB, address: t.address };
}

/**
 * Registers nodes believed to have what they report (fixtures, benches: the ingester pins and
 * believes with recordReportedTopology); returns how many rows were written.
 */
export async function upsertNodeTopology(sql: Sql, nodes: NodeTopology[], now: Date): Promise<number> {
  return (
    await upsertTopologyWrites(
      sql,
      nodes.map((t) => ({ believed: t, reported: t })),
      now,
    )
  ).size;
}

/**
 * Registers new nodes and records topology changes, in one multi-row statement, rows in id order.
 * Rows whose topology is unchanged are not rewritten (the WHERE on the conflict branch). Returns the
 * ids of the rows written.
 */
export async function upsertTopologyWrites(sql: Sql, nodes: TopologyWrite[], now: Date): Promise<Set<string>> {
  if (nodes.length === 0) return new Set();
  const params: unknown[] = [now];
  const tuples = [...nodes]
    .sort((a, b) => (a.believed.id < b.believed.id ? -1 : 1))
    .map(({ believed: t, reported }) => {
      params.push(
        t.id,
        t.zone,
        t.rack,
        t.gpuModel,
        t.gpusTotal,
        t.cpuCores,
        t.memoryMiB,
        intArrayLiteral(t.gpuIndices),
        t.address,
        t.logsPort,
        JSON.stringify(reportedRecord(reported)),
      );
      const b = params.length - 11;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::int, $${b + 6}::int, $${b + 7}::bigint, $${b + 8}::int[], $${b + 9}::text, $${b + 10}::int, $${b + 11}::jsonb, $1::timestamptz, $1::timestamptz)`;
    });
  const rows = await sql.rows<{ id: string }>(
    `INSERT INTO nodes (id, zone, rack, gpu_model, gpus_total, cpu_cores, memory_mib, gpu_indices, address, logs_port, reported, first_seen_at, updated_at)
     VALUES ${tuples.join(', ')}
     ON CONFLICT (id) DO UPDATE SET zone = EXCLUDED.zone, rack = EXCLUDED.rack, gpu_model = EXCLUDED.gpu_model,
       gpus_total = EXCLUDED.gpus_total, cpu_cores = EXCLUDED.cpu_cores, memory_mib = EXCLUDED.memory_mib,
       gpu_indices = EXCLUDED.gpu_indices, address = EXCLUDED.address, logs_port = EXCLUDED.logs_port, reported = EXCLUDED.reported,
       version = nodes.version + 1, updated_at = EXCLUDED.updated_at
     WHERE (nodes.zone, nodes.rack, nodes.gpu_model, nodes.gpus_total, nodes.cpu_cores, nodes.memory_mib, nodes.gpu_indices, nodes.address, nodes.logs_port, nodes.reported)
       IS DISTINCT FROM (EXCLUDED.zone, EXCLUDED.rack, EXCLUDED.gpu_model, EXCLUDED.gpus_total, EXCLUDED.cpu_cores, EXCLUDED.memory_mib, EXCLUDED.gpu_indices, EXCLUDED.address, EXCLUDED.logs_port, EXCLUDED.reported)
     RETURNING id`,
    params,
  );
  return new Set(rows.map((r) => r.id));
}

/** A node row with its pinned inventory (the enrollment's): what the views show. */
const WITH_DECLARED = `SELECT n.*, e.inventory AS declared FROM nodes n LEFT JOIN node_enrollments e ON e.node_id = n.id`;

export async function loadNodes(sql: Sql, ids: string[]): Promise<NodeRecord[]> {
  if (ids.length === 0) return [];
  const rows = await sql.rows(`${WITH_DECLARED} WHERE n.id = ANY($1::text[]) ORDER BY n.id`, [ids]);
  return rows.map(toNodeRecord);
}

export interface NodeWithWork {
  nodeId: string;
  rack: string;
}

/** Nodes holding at least one unreleased rank: the only ones whose death changes anything. */
export async function loadNodesWithLiveWork(sql: Sql): Promise<NodeWithWork[]> {
  const rows = await sql.rows<{ id: string; rack: string }>(
    `SELECT n.id, n.rack FROM nodes n WHERE EXISTS (SELECT 1 FROM attempt_nodes a WHERE a.node_id = n.id AND a.released_at IS NULL)`,
  );
  return rows.map((r) => ({ nodeId: r.id, rack: r.rack }));
}

/** Every node id with its rack, for judging whether a rack went silent as a whole. */
export async function loadNodeRacks(sql: Sql): Promise<Array<{ nodeId: string; rack: string }>> {
  const rows = await sql.rows<{ id: string; rack: string }>(`SELECT id, rack FROM nodes`);
  return rows.map((r) => ({ nodeId: r.id, rack: r.rack }));
}

/** Unreleased ranks on one node: (job, attempt) pairs. */
export async function liveRanksOnNode(sql: Sql, nodeId: string): Promise<Array<{ jobId: string; attempt: number }>> {
  const rows = await sql.rows<{ job_id: string; attempt: number }>(`SELECT job_id, attempt FROM attempt_nodes WHERE node_id = $1 AND released_at IS NULL`, [
    nodeId,
  ]);
  return rows.map((r) => ({ jobId: r.job_id, attempt: r.attempt }));
}

export interface NodeListFilter {
  gpuModel?: string;
  zone?: string;
}

/** Nodes in id order after `afterId`, filtered on durable columns (health is live state, filtered by the caller). */
export async function listNodesPage(sql: Sql, filter: NodeListFilter, afterId: string | null, limit: number): Promise<NodeRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (afterId !== null) where.push(`n.id > $${params.push(afterId)}`);
  if (filter.gpuModel !== undefined) where.push(`n.gpu_model = $${params.push(filter.gpuModel)}`);
  if (filter.zone !== undefined) where.push(`n.zone = $${params.push(filter.zone)}`);
  const rows = await sql.rows(`${WITH_DECLARED} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY n.id LIMIT $${params.push(limit)}`, params);
  return rows.map(toNodeRecord);
}

/**
 * Sets a node's cordon flag; idempotent (an unchanged flag rewrites nothing). Null when the node
 * is unknown. A change bumps `version`, so a plan made before it cannot commit onto the node, and
 * is recorded as a CORDONED or UNCORDONED node event in the same statement. An operator's cordon
 * has reason OPERATOR; an uncordon clears the reason and the node's start failures (ADR 0035).
 *
 * When the update changes nothing, the node is read again to answer; that read takes a newer
 * snapshot, so it can find a node the update could not see (its registration committed in between)
 * still with the other flag. The update is then tried again, rather than answering as if done:
 * a cordon of a node seconds old was lost that way (ADR 0007).
 */
export async function setNodeCordoned(sql: Sql, id: string, cordoned: boolean, now: Date): Promise<NodeRecord | null> {
  for (let attempt = 1; ; attempt++) {
    const changed = await sql.rows(
      `WITH changed AS (
         UPDATE nodes SET cordoned = $2, version = version + 1, updated_at = $3,
           drain_deadline = CASE WHEN $2 THEN drain_deadline END,
           cordon_reason = CASE WHEN $2 THEN 'OPERATOR' END, start_failures = CASE WHEN $2 THEN start_failures ELSE 0 END
         WHERE id = $1 AND cordoned <> $2 RETURNING *
       ), event AS (
         INSERT INTO node_events (node_id, type, at) SELECT id, CASE WHEN $2 THEN 'CORDONED' ELSE 'UNCORDONED' END, $3 FROM changed
       )
       SELECT c.*, e.inventory AS declared FROM changed c LEFT JOIN node_enrollments e ON e.node_id = c.id`,
      [id, cordoned, now],
    );
    if (changed.length > 0) return toNodeRecord(changed[0]);
    const node = (await loadNodes(sql, [id]))[0] ?? null;
    // A row that turned up (or flipped) between the two statements; once more sees it. Bounded: a
    // node flipped back and forth by others this fast is answered as it is.
    if (node === null || node.cordoned === cordoned || attempt === 3) return node;
  }
}

export interface GpuCapacityByModel {
  /** null for nodes without GPUs. */
  gpuModel: string | null;
  nodes: number;
  total: number;
  allocated: number;
  /** Unallocated GPUs on uncordoned nodes (what new work could get, health aside). */
  free: number;
}

/** Registered capacity per GPU model: one aggregate over the nodes table. */
export async function gpuCapacityByModel(sql: Sql): Promise<GpuCapacityByModel[]> {
  const rows = await sql.rows<Record<string, string | null>>(
    `SELECT gpu_model, count(*) AS nodes, coalesce(sum(gpus_total), 0) AS total, coalesce(sum(gpus_allocated), 0) AS allocated,
       coalesce(sum(CASE WHEN cordoned THEN 0 ELSE greatest(gpus_total - gpus_allocated, 0) END), 0) AS free
     FROM nodes GROUP BY gpu_model ORDER BY gpu_model NULLS LAST`,
  );
  return rows.map((r) => ({ gpuModel: r.gpu_model, nodes: Number(r.nodes), total: Number(r.total), allocated: Number(r.allocated), free: Number(r.free) }));
}

export type NodeRemoval = 'removed' | 'not-found' | 'busy';

/**
 * Removes a node that holds no live attempt: its row, its events and its recorded health go, and a
 * tombstone tells the readers of the change feed (loadNodesChangedSince) that it went. The row lock
 * comes first: a placement on the node (casAllocate, commitPlacementsThatHold) either committed
 * before it, and the live-attempt check (a later statement, so a later snapshot) sees its rank, or
 * finds the row gone and loses its race. Finished attempts keep naming the node. A node that beats
 * again afterwards is registered anew by the ingester, with a new `firstSeenAt`.
 */
export async function removeNode(ds: DataSource, id: string, now: Date): Promise<NodeRemoval> {
  return inTransaction(ds, async (sql) => {
    const [node] = await sql.rows(`SELECT id FROM nodes WHERE id = $1 FOR UPDATE`, [id]);
    if (!node) return 'not-found';
    const [live] = await sql.rows(`SELECT 1 FROM attempt_nodes WHERE node_id = $1 AND released_at IS NULL LIMIT 1`, [id]);
    if (live) return 'busy';
    await sql.rows(
      `WITH events AS (DELETE FROM node_events WHERE node_id = $1), health AS (DELETE FROM node_health WHERE node_id = $1),
         tombstone AS (
           INSERT INTO removed_nodes (node_id, removed_at) VALUES ($1, $2)
           ON CONFLICT (node_id) DO UPDATE SET removed_xid = pg_current_xact_id(), removed_at = EXCLUDED.removed_at
         )
       DELETE FROM nodes WHERE id = $1`,
      [id, now],
    );
    return 'removed';
  });
}

/** Forgets tombstones of nodes removed before `before` (readers re-read every node more often than that); returns how many. */
export async function sweepNodeTombstones(sql: Sql, before: Date): Promise<number> {
  return (await sql.rows(`DELETE FROM removed_nodes WHERE removed_at < $1 RETURNING node_id`, [before])).length;
}

/** Where one rank of one attempt ran, and where that node's agent serves logs (ADR 0021); null when no such rank was placed. */
export interface AttemptRankLocation {
  nodeId: string;
  /**
   * The node's pinned address (ADR 0035: declared, or the first it reported), never one it reports
   * now: the gateway dials it. Null when none is pinned, or the node was removed since.
   */
  address: string | null;
  logsPort: number | null;
}

export async function findAttemptRankLocation(sql: Sql, jobId: string, attempt: number, rank: number): Promise<AttemptRankLocation | null> {
  const rows = await sql.rows<{ node_id: string; address: string | null; logs_port: number | null }>(
    `SELECT a.node_id, e.inventory->>'address' AS address, n.logs_port FROM attempt_nodes a
       LEFT JOIN nodes n ON n.id = a.node_id LEFT JOIN node_enrollments e ON e.node_id = n.id
      WHERE a.job_id = $1 AND a.attempt = $2 AND a.rank = $3`,
    [jobId, attempt, rank],
  );
  return rows[0] ? { nodeId: rows[0].node_id, address: rows[0].address, logsPort: rows[0].logs_port } : null;
}

/**
 * Starts draining a node: cordons it (recorded as CORDONED if it was not) and sets the time its
 * remaining attempts are ended (the earlier deadline wins if it was already draining). Null when
 * the node is unknown. An uncordon cancels the drain (setNodeCordoned).
 */
export async function requestNodeDrain(sql: Sql, id: string, deadline: Date, now: Date): Promise<NodeRecord | null> {
  const rows = await sql.rows(
    `WITH before AS (SELECT id, cordoned FROM nodes WHERE id = $1 FOR UPDATE), changed AS (
       UPDATE nodes n SET cordoned = true, drain_deadline = LEAST(COALESCE(n.drain_deadline, $2), $2), cordon_reason = 'DRAIN',
         version = n.version + CASE WHEN b.cordoned THEN 0 ELSE 1 END, updated_at = $3
       FROM before b WHERE n.id = b.id RETURNING n.*, b.cordoned AS was_cordoned
     ), event AS (
       INSERT INTO node_events (node_id, type, at, reason) SELECT id, 'CORDONED', $3, 'DRAIN' FROM changed WHERE NOT was_cordoned
     )
     SELECT c.*, e.inventory AS declared FROM changed c LEFT JOIN node_enrollments e ON e.node_id = c.id`,
    [id, deadline, now],
  );
  return rows[0] ? toNodeRecord(rows[0]) : null;
}

/** Nodes whose drain deadline has passed: the reconciler ends what still runs there. */
export async function nodesDueForDrain(sql: Sql, now: Date): Promise<string[]> {
  const rows = await sql.rows<{ id: string }>(`SELECT id FROM nodes WHERE drain_deadline <= $1 ORDER BY id`, [now]);
  return rows.map((r) => r.id);
}

/** The drain is over (its attempts were ended); the node stays cordoned. */
export async function finishNodeDrain(sql: Sql, id: string): Promise<void> {
  await sql.rows(`UPDATE nodes SET drain_deadline = NULL WHERE id = $1`, [id]);
}
