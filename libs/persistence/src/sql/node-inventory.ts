import type { DataSource } from 'typeorm';
import { InventoryResource, NodeInventory, NodeTopology, believedTopology, judgeStartFailures, pinAfterReport } from '@gantry/domain';
import { type ReportedHardwareRecord, upsertTopologyWrites } from './nodes';
import { Sql, inTransaction, intArrayLiteral } from './sql';

/*
 * A node is trusted for what an operator declared (contract §5.2, ADR 0035). The pinned inventory
 * lives on the node's enrollment (a node is enrolled before it first beats); the nodes table keeps
 * what the node reports (`reported`) and, in the columns every reader uses, what is believed of it
 * (believedTopology). Every writer of either side locks the enrollment rows first, in node id
 * order, then the node rows: a declaration and a report of the same node cannot both be computed
 * from the other's old value, and no two of these writers wait on each other in a cycle.
 */

/** A topology the ingester recorded, and what its report claimed beyond the pinned inventory. */
export interface RecordedTopology {
  nodeId: string;
  exceeded: InventoryResource[];
}

const byId =
  <T>(id: (x: T) => string) =>
  (a: T, b: T) =>
    id(a) < id(b) ? -1 : id(a) > id(b) ? 1 : 0;

/**
 * Records reported topologies (the heartbeat-ingester, for nodes that are new or changed only), in
 * one transaction: the first report of a node enrolled without an inventory is pinned (pinAfterReport),
 * and each row gets the believed capacity. Returns the rows written (an unchanged row is not).
 * A node with no enrollment (only tests write such) is believed as it reports.
 */
export async function recordReportedTopology(ds: DataSource, reports: NodeTopology[], now: Date): Promise<RecordedTopology[]> {
  if (reports.length === 0) return [];
  const ordered = [...reports].sort(byId((t) => t.id));
  return inTransaction(ds, async (sql) => {
    const rows = await sql.rows<{ node_id: string; inventory: NodeInventory | null }>(
      `SELECT node_id, inventory FROM node_enrollments WHERE node_id = ANY($1::text[]) ORDER BY node_id FOR UPDATE`,
      [ordered.map((t) => t.id)],
    );
    const enrolled = new Map(rows.map((r) => [r.node_id, r.inventory]));
    const pins: Array<{ nodeId: string; inventory: NodeInventory }> = [];
    const writes = ordered.map((reported) => {
      const before = enrolled.get(reported.id) ?? null;
      const pinned = pinAfterReport(before, reported);
      if (enrolled.has(reported.id) && pinned !== before) pins.push({ nodeId: reported.id, inventory: pinned });
      const { topology, exceeded } = believedTopology(reported, pinned);
      return { believed: topology, reported, exceeded };
    });
    await writeInventories(sql, pins);
    const written = await upsertTopologyWrites(sql, writes, now);
    return writes.filter((w) => written.has(w.reported.id)).map((w) => ({ nodeId: w.reported.id, exceeded: w.exceeded }));
  });
}

/**
 * Pins declared inventories (enrollment with an inventory, PATCH /v1/nodes/{id}), inside the
 * caller's transaction, on enrollments that exist. A declaration without an address takes the one
 * the node reported, if it has (pinAfterReport). Each registered node's believed capacity is worked
 * out again from its last report and written with a new version, so a plan made against the old
 * capacity cannot commit onto it (ADR 0003).
 */
export async function declareInventories(sql: Sql, declared: Array<{ nodeId: string; inventory: NodeInventory }>, now: Date): Promise<void> {
  if (declared.length === 0) return;
  const ordered = [...declared].sort(byId((d) => d.nodeId));
  const ids = ordered.map((d) => d.nodeId);
  const enrolled = new Set(
    (await sql.rows<{ node_id: string }>(`SELECT node_id FROM node_enrollments WHERE node_id = ANY($1::text[]) ORDER BY node_id FOR UPDATE`, [ids])).map(
      (r) => r.node_id,
    ),
  );
  const rows = await sql.rows<{ id: string; zone: string; rack: string; logs_port: number | null; reported: ReportedHardwareRecord }>(
    `SELECT id, zone, rack, logs_port, reported FROM nodes WHERE id = ANY($1::text[]) AND reported IS NOT NULL ORDER BY id FOR UPDATE`,
    [ids],
  );
  const reports = new Map(rows.map((n) => [n.id, reportedTopologyOf({ ...n, logsPort: n.logs_port })!]));
  const pins = ordered
    .filter((d) => enrolled.has(d.nodeId))
    .map((d) => {
      const reported = reports.get(d.nodeId);
      return { nodeId: d.nodeId, inventory: reported ? pinAfterReport(d.inventory, reported) : d.inventory };
    });
  await writeInventories(sql, pins);
  const believed = pins.filter((p) => reports.has(p.nodeId)).map((p) => believedTopology(reports.get(p.nodeId)!, p.inventory).topology);
  if (believed.length === 0) return;
  await sql.rows(
    `UPDATE nodes n SET gpu_model = v.gpu_model, gpus_total = v.gpus_total, gpu_indices = v.gpu_indices::int[], cpu_cores = v.cpu_cores,
       memory_mib = v.memory_mib, address = v.address, version = n.version + 1, updated_at = $8
     FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::int[], $6::bigint[], $7::text[])
       AS v (id, gpu_model, gpus_total, gpu_indices, cpu_cores, memory_mib, address)
     WHERE n.id = v.id AND (n.gpu_model, n.gpus_total, n.gpu_indices, n.cpu_cores, n.memory_mib, n.address)
       IS DISTINCT FROM (v.gpu_model, v.gpus_total, v.gpu_indices::int[], v.cpu_cores, v.memory_mib, v.address)`,
    [
      believed.map((t) => t.id),
      believed.map((t) => t.gpuModel),
      believed.map((t) => t.gpusTotal),
      believed.map((t) => intArrayLiteral(t.gpuIndices)),
      believed.map((t) => t.cpuCores),
      believed.map((t) => t.memoryMiB),
      believed.map((t) => t.address),
      now,
    ],
  );
}

/** The pinned inventory of one enrolled node, locked for the caller's transaction; undefined when it was never enrolled. */
export async function lockPinnedInventory(sql: Sql, nodeId: string): Promise<NodeInventory | null | undefined> {
  const [row] = await sql.rows<{ inventory: NodeInventory | null }>(`SELECT inventory FROM node_enrollments WHERE node_id = $1 FOR UPDATE`, [nodeId]);
  return row ? row.inventory : undefined;
}

/** What a node row says the node last reported, as a topology; null for a row that has no report. */
export function reportedTopologyOf(n: {
  id: string;
  zone: string;
  rack: string;
  logsPort: number | null;
  reported: ReportedHardwareRecord | null;
}): NodeTopology | null {
  const r = n.reported;
  if (r === null) return null;
  return {
    id: n.id,
    zone: n.zone,
    rack: n.rack,
    logsPort: n.logsPort,
    gpuModel: r.gpuModel,
    gpusTotal: r.gpuIndices.length,
    gpuIndices: r.gpuIndices,
    cpuCores: r.cpuCores,
    memoryMiB: Number(r.memoryMiB),
    address: r.address,
  };
}

async function writeInventories(sql: Sql, pins: Array<{ nodeId: string; inventory: NodeInventory }>): Promise<void> {
  if (pins.length === 0) return;
  await sql.rows(`UPDATE node_enrollments e SET inventory = v.inventory FROM unnest($1::text[], $2::jsonb[]) AS v (id, inventory) WHERE e.node_id = v.id`, [
    pins.map((p) => p.nodeId),
    pins.map((p) => JSON.stringify(p.inventory)),
  ]);
}

/**
 * Counts a start failure (START_TIMEOUT) on each node, inside the caller's transaction, and cordons
 * those it brings to `threshold` in a row (judgeStartFailures) with reason START_FAILURES and a
 * CORDONED node event. Returns the nodes it cordoned.
 */
export async function recordStartFailures(sql: Sql, nodeIds: readonly string[], threshold: number, now: Date): Promise<string[]> {
  if (nodeIds.length === 0) return [];
  const counted = await sql.rows<{ id: string; start_failures: number; cordoned: boolean }>(
    `UPDATE nodes n SET start_failures = n.start_failures + 1 FROM (SELECT DISTINCT unnest($1::text[]) AS id ORDER BY 1) v
     WHERE n.id = v.id RETURNING n.id, n.start_failures, n.cordoned`,
    [nodeIds],
  );
  const cordon = counted.filter((n) => judgeStartFailures(n.start_failures, threshold, n.cordoned).kind === 'cordon').map((n) => n.id);
  if (cordon.length === 0) return [];
  const rows = await sql.rows<{ id: string }>(
    `WITH changed AS (
       UPDATE nodes SET cordoned = true, cordon_reason = 'START_FAILURES', version = version + 1, updated_at = $2
       WHERE id = ANY($1::text[]) AND NOT cordoned RETURNING id
     ), event AS (
       INSERT INTO node_events (node_id, type, at, reason) SELECT id, 'CORDONED', $2, 'START_FAILURES' FROM changed
     )
     SELECT id FROM changed`,
    [cordon, now],
  );
  return rows.map((r) => r.id);
}
