import { Sql } from './sql';

/** A node as the fleet heatmap draws it: where it stands, what it holds, whether it is cordoned. */
export interface NodeGridRow {
  id: string;
  zone: string;
  rack: string;
  gpusTotal: number;
  gpusAllocated: number;
  cordoned: boolean;
}

/**
 * Every registered node, ordered by zone, rack and id: one scan of the nodes table with only the
 * columns a heatmap needs, for callers that cache it (its cost: ADR 0018).
 */
export async function loadNodeGrid(sql: Sql): Promise<NodeGridRow[]> {
  const rows = await sql.rows<{ id: string; zone: string; rack: string; gpus_total: number; gpus_allocated: number; cordoned: boolean }>(
    `SELECT id, zone, rack, gpus_total, gpus_allocated, cordoned FROM nodes ORDER BY zone, rack, id`,
  );
  return rows.map((r) => ({ id: r.id, zone: r.zone, rack: r.rack, gpusTotal: r.gpus_total, gpusAllocated: r.gpus_allocated, cordoned: r.cordoned }));
}
