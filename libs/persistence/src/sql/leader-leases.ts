import { Sql } from './sql';

export interface Leadership {
  name: string;
  holder: string;
  epoch: number;
}

/**
 * Takes or renews the lease `name` for `holder` for `ttlMs`, judged by the database's clock so
 * replicas' clocks don't matter. A new holder bumps the epoch; a renewal keeps it. Null when
 * someone else holds an unexpired lease.
 */
export async function acquireLeadership(sql: Sql, name: string, holder: string, ttlMs: number): Promise<Leadership | null> {
  const [row] = await sql.rows<{ epoch: string }>(
    `INSERT INTO leader_leases (name, holder, epoch, expires_at) VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
     ON CONFLICT (name) DO UPDATE SET
       epoch = CASE WHEN leader_leases.holder = EXCLUDED.holder THEN leader_leases.epoch ELSE leader_leases.epoch + 1 END,
       holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE leader_leases.holder = EXCLUDED.holder OR leader_leases.expires_at < now()
     RETURNING epoch`,
    [name, holder, ttlMs],
  );
  return row ? { name, holder, epoch: Number(row.epoch) } : null;
}

/**
 * The fencing check, run inside the leader's write transaction: true only if `who` still holds the
 * unexpired lease at that epoch. FOR SHARE makes a concurrent takeover wait until this transaction
 * ends, so a deposed leader that wakes up late cannot commit.
 */
export async function holdsLeadership(sql: Sql, who: Leadership): Promise<boolean> {
  const rows = await sql.rows(`SELECT 1 FROM leader_leases WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > now() FOR SHARE`, [
    who.name,
    who.holder,
    who.epoch,
  ]);
  return rows.length === 1;
}

export async function releaseLeadership(sql: Sql, who: Leadership): Promise<void> {
  await sql.rows(`UPDATE leader_leases SET expires_at = now() WHERE name = $1 AND holder = $2 AND epoch = $3`, [who.name, who.holder, who.epoch]);
}
