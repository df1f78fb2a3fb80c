import 'reflect-metadata';
import { IsInt, Max, Min } from 'class-validator';
import { StatefulServiceEnv } from '@gantry/platform';

export class ReconcilerEnv extends StatefulServiceEnv {
  /** Job-report partitions processed at once by this replica. */
  @IsInt() @Min(1) @Max(64) GANTRY_REPORT_CONCURRENCY: number = 3;
}
