import 'reflect-metadata';
import { createDataSource } from '../data-source';

/** `npm run migrate`: applies pending migrations to DATABASE_URL. Services never migrate at start. */
async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is not set: it must name the Postgres database to migrate');
  const ds = createDataSource({ url, poolSize: 1, applicationName: 'gantry-migrate' });
  await ds.initialize();
  try {
    const applied = await ds.runMigrations({ transaction: 'each' });
    console.log(applied.length ? `applied: ${applied.map((m) => m.name).join(', ')}` : 'schema up to date');
  } finally {
    await ds.destroy();
  }
}

main().catch((e) => {
  console.error(`migration failed: ${(e as Error).message}`);
  process.exit(1);
});
