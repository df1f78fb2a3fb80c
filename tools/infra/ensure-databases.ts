import { Client } from 'pg';

/**
 * Creates the databases named in the given URLs when missing, connecting to the server's
 * `postgres` database. Used by `npm start` and `npm test`, never by services.
 */
async function main(): Promise<void> {
  const urls = process.argv.slice(2);
  for (const raw of urls) {
    const url = new URL(raw);
    const name = decodeURIComponent(url.pathname.slice(1));
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`refusing to create database with name "${name}"`);
    url.pathname = '/postgres';
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
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
