import 'reflect-metadata';
import { IsOptional, IsString, MinLength } from 'class-validator';
import { StatefulServiceEnv } from '@gantry/platform';

export class GatewayEnv extends StatefulServiceEnv {
  /** Bearer token with role `operator`, owner `admin`. */
  @IsString() @MinLength(16, { message: 'GANTRY_ADMIN_TOKEN must be at least 16 characters' })
  GANTRY_ADMIN_TOKEN!: string;
  /** Key that signs pagination cursors; defaults to one derived from the admin token. */
  @IsOptional() @IsString() @MinLength(16) GANTRY_CURSOR_SECRET?: string;
}
