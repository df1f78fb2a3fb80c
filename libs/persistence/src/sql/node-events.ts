import type { NodeHealth, RecordedHealth } from '@gantry/domain';
import { Sql } from './sql';

export type NodeEventType = 'HEALTH_CHANGED' | 'EVICTED' | 'CORDONED' | 'UNCORDONED' | 'DRAINED';

export interface NewNodeEvent {
  nodeId: string;
  type: NodeEventType;
  at: Date;
  fromHealth?: NodeHealth;
  toHealth?: NodeHealth;
  reason?: string;
  jobIds?: string[];
}

export interface NodeEventRecord extends NewNodeEvent {
  id: number;
}

/** Rows per INSERT: a rack of hundreds (or a fleet after a stall) changes at once. */
const CHUNK = 1000;

/** Appends node events; `epoch` is the detector leader's fencing token (null for operator actions). */
export async function appendNodeEvents(sql: Sql, events: NewNodeEvent[], epoch: number | null): Promise<void> {
  for (let i = 0; i < events.length; i += CHUNK) {
    const params: unknown[] = [epoch];
    const tuples = events.slice(i, i + CHUNK).map((e) => {
      params.push(e.nodeId, e.type, e.at, e.fromHealth ?? null, e.toHealth ?? null, e.reason ?? null, e.jobIds ?? null);
      const b = params.length - 7;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}::uuid[], $1::bigint)`;
    });
    await sql.rows(`INSERT INTO node_events (node_id, type, at, from_health, to_health, reason, job_ids, epoch) VALUES ${tuples.join(', ')}`, params);
  }
}

/** One node's events after `afterId`, oldest first. */
export async function listNodeEvents(sql: Sql, nodeId: string, afterId: number, limit: number): Promise<NodeEventRecord[]> {
  const rows = await sql.rows<Record<string, any>>(`SELECT * FROM node_events WHERE node_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [nodeId, afterId, limit]);
  return rows.map((r) => ({
    id: Number(r.id),
    nodeId: r.node_id,
    type: r.type,
    at: r.at,
    fromHealth: r.from_health ?? undefined,
    toHealth: r.to_health ?? undefined,
    reason: r.reason ?? undefined,
    jobIds: r.job_ids ?? undefined,
  }));
}

/** The detector's recorded health of every node it has recorded (unrecorded nodes are HEALTHY). */
export async function loadRecordedHealth(sql: Sql): Promise<Map<string, RecordedHealth>> {
  const rows = await sql.rows<{ node_id: string; health: NodeHealth; held: boolean; held_since: Date | null }>(
    `SELECT node_id, health, held, held_since FROM node_health`,
  );
  return new Map(rows.map((r) => [r.node_id, { health: r.health, held: r.held, heldSinceMs: r.held_since ? r.held_since.getTime() : null }]));
}

/** Records the new health of the nodes that changed, in one statement per chunk. */
export async function saveRecordedHealth(sql: Sql, changes: Array<{ nodeId: string; to: RecordedHealth }>, now: Date): Promise<void> {
  for (let i = 0; i < changes.length; i += CHUNK) {
    const params: unknown[] = [now];
    const tuples = changes.slice(i, i + CHUNK).map((c) => {
      params.push(c.nodeId, c.to.health, c.to.held, c.to.heldSinceMs === null ? null : new Date(c.to.heldSinceMs));
      const b = params.length - 4;
      return `($${b + 1}, $${b + 2}, $${b + 3}::boolean, $${b + 4}::timestamptz, $1::timestamptz)`;
    });
    await sql.rows(
      `INSERT INTO node_health (node_id, health, held, held_since, changed_at) VALUES ${tuples.join(', ')}
       ON CONFLICT (node_id) DO UPDATE SET health = EXCLUDED.health, held = EXCLUDED.held, held_since = EXCLUDED.held_since, changed_at = EXCLUDED.changed_at`,
      params,
    );
  }
}
