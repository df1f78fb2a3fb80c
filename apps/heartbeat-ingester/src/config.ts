import 'reflect-metadata';
import { IsInt, Max, Min } from 'class-validator';
import { StatefulServiceEnv } from '@gantry/platform';

export class IngesterEnv extends StatefulServiceEnv {
  /** Heartbeat partitions processed at once by this replica. */
  @IsInt() @Min(1) @Max(64) GANTRY_INGEST_CONCURRENCY: number = 4;
}
