import { Sql } from './sql';

export interface NodeEnrollment {
  nodeId: string;
  generation: number;
  revoked: boolean;
}

/**
 * Enrolls each node, or enrolls it again: a new generation, so the credential of the last one stops
 * verifying (rotation), and a revoked node is enrolled anew. Returns each node's new generation.
 */
export async function enrollNodes(sql: Sql, nodeIds: string[], now: Date): Promise<Map<string, number>> {
  const rows = await sql.rows<{ node_id: string; generation: number }>(
    `INSERT INTO node_enrollments (node_id, generation, enrolled_at)
     SELECT id, 1, $2 FROM unnest($1::text[]) AS id
     ON CONFLICT (node_id) DO UPDATE SET generation = node_enrollments.generation + 1, enrolled_at = $2, revoked_at = NULL
     RETURNING node_id, generation`,
    [nodeIds, now],
  );
  return new Map(rows.map((r) => [r.node_id, r.generation]));
}

/** Revokes a node's enrollment; false when it was never enrolled. Revoking twice is harmless. */
export async function revokeNodeEnrollment(sql: Sql, nodeId: string, now: Date): Promise<boolean> {
  const rows = await sql.rows(`UPDATE node_enrollments SET revoked_at = coalesce(revoked_at, $2) WHERE node_id = $1 RETURNING node_id`, [nodeId, now]);
  return rows.length > 0;
}

/** A node's enrollment as the database holds it now (not a replica's copy); null when never enrolled. */
export async function findEnrollment(sql: Sql, nodeId: string): Promise<{ generation: number; revoked: boolean } | null> {
  const [row] = await sql.rows<{ generation: number; revoked_at: Date | null }>(`SELECT generation, revoked_at FROM node_enrollments WHERE node_id = $1`, [
    nodeId,
  ]);
  return row ? { generation: row.generation, revoked: row.revoked_at !== null } : null;
}

export interface EnrollmentChanges {
  /** Pass back as `since` next time (see loadNodesChangedSince: the same snapshot-horizon rule). */
  horizon: string;
  enrollments: NodeEnrollment[];
}

/** Every enrollment when `since` is null, else those written by transactions at or after `since`. */
export async function loadEnrollmentsChangedSince(sql: Sql, since: string | null): Promise<EnrollmentChanges> {
  const rows = await sql.rows<{ horizon: string; node_id: string | null; generation: number; revoked_at: Date | null }>(
    `SELECT h.horizon, e.node_id, e.generation, e.revoked_at
     FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon) h
     LEFT JOIN node_enrollments e ON ${since === null ? 'true' : 'e.changed_xid >= $1::xid8'}`,
    since === null ? [] : [since],
  );
  return {
    horizon: rows[0].horizon,
    enrollments: rows.filter((r) => r.node_id !== null).map((r) => ({ nodeId: r.node_id!, generation: r.generation, revoked: r.revoked_at !== null })),
  };
}
