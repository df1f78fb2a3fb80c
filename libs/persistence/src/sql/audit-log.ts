import { Sql } from './sql';

export interface AuditEntry {
  at: Date;
  actor: { owner: string; role: string; tokenId: string | null };
  /** The caller's network address as the gateway saw it. */
  address: string | null;
  /** What was done, named like the operation (`tokens.create`, `queues.delete`, `nodes.cordon`, ...). */
  action: string;
  /** What it was done to: a token id, a queue name, a node id, a job id. */
  target: string;
  details: Record<string, unknown>;
}

export interface AuditRecord extends AuditEntry {
  id: number;
}

export async function appendAuditEntry(sql: Sql, e: AuditEntry): Promise<void> {
  await sql.rows(
    `INSERT INTO audit_log (at, actor_owner, actor_role, actor_token_id, address, action, target, details) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [e.at, e.actor.owner, e.actor.role, e.actor.tokenId, e.address, e.action, e.target, JSON.stringify(e.details)],
  );
}

/** Entries newest first, before the entry `beforeId` (null: from the newest). */
export async function listAuditEntries(sql: Sql, beforeId: number | null, limit: number): Promise<AuditRecord[]> {
  const rows = await sql.rows<Record<string, any>>(
    beforeId === null ? `SELECT * FROM audit_log ORDER BY id DESC LIMIT $1` : `SELECT * FROM audit_log WHERE id < $2 ORDER BY id DESC LIMIT $1`,
    beforeId === null ? [limit] : [limit, beforeId],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    at: r.at,
    actor: { owner: r.actor_owner, role: r.actor_role, tokenId: r.actor_token_id },
    address: r.address,
    action: r.action,
    target: r.target,
    details: r.details,
  }));
}
