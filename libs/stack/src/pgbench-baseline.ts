import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand, withDb } from './local-infra';

/*
 * The same-run Postgres baseline that every benchmark and test:chaos report beside their figures:
 * hosts of one kind differ too much for raw figures to compare, so a figure is quoted as a ratio to
 * this.
 */

export function findPgbench(): string {
  if (process.env.BENCH_PGBENCH) return process.env.BENCH_PGBENCH;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) {
    const p = join(base, v, 'bin', 'pgbench');
    if (existsSync(p)) return p;
  }
  return 'pgbench';
}

export interface PgbenchResult {
  command: string;
  script: string;
  tps: number;
  latencyAvgMs: number | null;
  transactions: number | null;
  failed: number | null;
  output: string;
}

/**
 * The denominator: single-row INSERTs (autocommit, one statement per transaction) into a scratch
 * table in the bench database, as many as pgbench's clients can do.
 */
export async function runPgbench(url: string, opts: { durationS: number; clients: number; threads: number }): Promise<PgbenchResult> {
  await withDb(url, (c) =>
    c.query(`CREATE TABLE IF NOT EXISTS bench_pgbench_insert (
      id uuid PRIMARY KEY, owner text NOT NULL, payload jsonb NOT NULL, created_at timestamptz NOT NULL)`),
  );
  const script = `INSERT INTO bench_pgbench_insert (id, owner, payload, created_at) VALUES (gen_random_uuid(), 'bench', '{"name":"bench","command":["true"]}', now());\n`;
  const dir = mkdtempSync(join(tmpdir(), 'gantry-bench-'));
  const file = join(dir, 'insert.sql');
  writeFileSync(file, script);
  const args = ['-n', '-c', String(opts.clients), '-j', String(opts.threads), '-T', String(opts.durationS), '-f', file, url];
  let output: string;
  try {
    output = await runCommand(findPgbench(), args);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const num = (re: RegExp) => {
    const m = re.exec(output);
    return m ? Number(m[1]) : null;
  };
  const tps = num(/tps = ([\d.]+) \(without initial connection time\)/) ?? num(/tps = ([\d.]+)/);
  if (tps === null) throw new Error(`could not read tps from pgbench output:\n${output}`);
  return {
    command: `pgbench ${args.slice(0, -2).join(' ')} insert.sql <bench database>`,
    script: script.trim(),
    tps,
    latencyAvgMs: num(/latency average = ([\d.]+) ms/),
    transactions: num(/number of transactions actually processed: (\d+)/),
    failed: num(/number of failed transactions: (\d+)/),
    output,
  };
}
