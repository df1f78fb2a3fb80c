import { DataSource } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

export interface DataSourceOptions {
  url: string;
  /** Pool size per process. */
  poolSize?: number;
  applicationName?: string;
}

/** The one way services reach Postgres. Schema changes only through migrations, never `synchronize`. */
export function createDataSource(opts: DataSourceOptions): DataSource {
  return new DataSource({
    type: 'postgres',
    url: opts.url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'gantry_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: { max: opts.poolSize ?? 10, application_name: opts.applicationName ?? 'gantry' },
  });
}
