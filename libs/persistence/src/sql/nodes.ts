import { NodeEntity } from '../entities/node.entity';
import { ConcurrentUpdateError, Sql } from './sql';

export type NodeRecord = Omit<NodeEntity, never>;

export function toNodeRecord(r: Record<string, any>): NodeRecord {
  return {
    id: r.id, zone: r.zone, rack: r.rack, gpuModel: r.gpu_model, gpusTotal: r.gpus_total, cpuCores: r.cpu_cores,
    memoryMiB: Number(r.memory_mib), gpusAllocated: r.gpus_allocated, cpuAllocated: r.cpu_allocated,
    memoryAllocated: Number(r.memory_allocated), cordoned: r.cordoned, version: Number(r.version),
    firstSeenAt: r.first_seen_at, updatedAt: r.updated_at,
  };
}

export interface NodeTopology {
  id: string;
  zone: string;
  rack: string;
  gpuModel: string | null;
  gpusTotal: number;
  cpuCores: number;
  memoryMiB: number;
}

/**
 * Registers new nodes and records topology changes, in one multi-row statement.
 * Rows whose topology is unchanged are not rewritten (the WHERE on the conflict branch).
 */
export async function upsertNodeTopology(sql: Sql, nodes: NodeTopology[], now: Date): Promise<number> {
  if (nodes.length === 0) return 0;
  const params: unknown[] = [now];
  const tuples = nodes.map((t) => {
    params.push(t.id, t.zone, t.rack, t.gpuModel, t.gpusTotal, t.cpuCores, t.memoryMiB);
    const b = params.length - 7;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::int, $${b + 6}::int, $${b + 7}::bigint, $1::timestamptz, $1::timestamptz)`;
  });
  const rows = await sql.rows(
    `INSERT INTO nodes (id, zone, rack, gpu_model, gpus_total, cpu_cores, memory_mib, first_seen_at, updated_at)
     VALUES ${tuples.join(', ')}
     ON CONFLICT (id) DO UPDATE SET zone = EXCLUDED.zone, rack = EXCLUDED.rack, gpu_model = EXCLUDED.gpu_model,
       gpus_total = EXCLUDED.gpus_total, cpu_cores = EXCLUDED.cpu_cores, memory_mib = EXCLUDED.memory_mib,
       version = nodes.version + 1, updated_at = EXCLUDED.updated_at
     WHERE (nodes.zone, nodes.rack, nodes.gpu_model, nodes.gpus_total, nodes.cpu_cores, nodes.memory_mib)
       IS DISTINCT FROM (EXCLUDED.zone, EXCLUDED.rack, EXCLUDED.gpu_model, EXCLUDED.gpus_total, EXCLUDED.cpu_cores, EXCLUDED.memory_mib)
     RETURNING id`,
    params,
  );
  return rows.length;
}

export async function loadNodes(sql: Sql, ids: string[]): Promise<NodeRecord[]> {
  if (ids.length === 0) return [];
  const rows = await sql.rows(`SELECT * FROM nodes WHERE id = ANY($1::text[]) ORDER BY id`, [ids]);
  return rows.map(toNodeRecord);
}

export interface Allocation {
  nodeId: string;
  expectedVersion: number;
  gpus: number;
  cpuCores: number;
  memoryMiB: number;
}

/**
 * The placement guarantee: takes capacity on each node only if its allocation version is the one
 * the plan was made from and the capacity still holds. Nodes are updated in id order so two
 * gangs competing for the same nodes lock them in one global order and cannot deadlock.
 */
export async function casAllocate(sql: Sql, allocations: Allocation[], now: Date): Promise<void> {
  const ordered = [...allocations].sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  for (const a of ordered) {
    const rows = await sql.rows(
      `UPDATE nodes SET gpus_allocated = gpus_allocated + $3, cpu_allocated = cpu_allocated + $4,
         memory_allocated = memory_allocated + $5, version = version + 1, updated_at = $6
       WHERE id = $1 AND version = $2 AND NOT cordoned
         AND gpus_allocated + $3 <= gpus_total AND cpu_allocated + $4 <= cpu_cores AND memory_allocated + $5 <= memory_mib
       RETURNING id`,
      [a.nodeId, a.expectedVersion, a.gpus, a.cpuCores, a.memoryMiB, now],
    );
    if (rows.length === 0) throw new ConcurrentUpdateError(`node ${a.nodeId}`);
  }
}

export async function loadAllNodes(sql: Sql): Promise<NodeRecord[]> {
  const rows = await sql.rows(`SELECT * FROM nodes ORDER BY id`);
  return rows.map(toNodeRecord);
}
