import { Client } from 'pg';

/**
 * Creates the databases named in the given URLs when missing, connecting to the server's
 * `postgres` database; with `--recreate`, drops them first. Used by `npm start` and `npm test`,
 * never by services.
 */
async function main(): Promise<void> {
  const recreate = process.argv.includes('--recreate');
  const urls = process.argv.slice(2).filter((a) => a !== '--recreate');
  for (const raw of urls) {
    const url = new URL(raw);
    const name = decodeURIComponent(url.pathname.slice(1));
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`refusing to create database with name "${name}"`);
    url.pathname = '/postgres';
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      if (recreate) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (!rowCount) {
        await client.query(`CREATE DATABASE ${name}`);
        console.log(`created database ${name}`);
      }
    } finally {
      await client.end();
    }
  }
}

main().catch((e) => {
  console.error(`cannot prepare Postgres databases: ${(e as Error).message}`);
  process.exit(1);
});
