import { Sql } from './sql';

export interface ApiTokenRecord {
  id: string;
  owner: string;
  role: 'user' | 'operator';
}

export async function insertApiToken(sql: Sql, t: ApiTokenRecord & { secretSha256: string; createdAt: Date }): Promise<void> {
  await sql.rows(`INSERT INTO api_tokens (id, owner, role, secret_sha256, created_at) VALUES ($1, $2, $3, $4, $5)`, [
    t.id, t.owner, t.role, t.secretSha256, t.createdAt,
  ]);
}

export async function findApiTokenBySecretHash(sql: Sql, secretSha256: string): Promise<ApiTokenRecord | null> {
  const [row] = await sql.rows<ApiTokenRecord>(`SELECT id, owner, role FROM api_tokens WHERE secret_sha256 = $1`, [secretSha256]);
  return row ?? null;
}
