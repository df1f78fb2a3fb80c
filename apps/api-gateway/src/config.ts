import 'reflect-metadata';
import { IsInt, IsOptional, IsString, Min, MinLength } from 'class-validator';
import { StatefulServiceEnv } from '@gantry/platform';

export class GatewayEnv extends StatefulServiceEnv {
  /** Bearer token with role `operator`, owner `admin`. */
  @IsString() @MinLength(16, { message: 'GANTRY_ADMIN_TOKEN must be at least 16 characters' })
  GANTRY_ADMIN_TOKEN!: string;
  /** Key that signs pagination cursors; defaults to one derived from the admin token. */
  @IsOptional() @IsString() @MinLength(16) GANTRY_CURSOR_SECRET?: string;
  /** How long an Idempotency-Key is remembered, ms (24 h). */
  @IsInt() @Min(1000) GANTRY_IDEMPOTENCY_TTL_MS: number = 24 * 60 * 60 * 1000;
  /** How often expired idempotency keys are swept, ms. */
  @IsInt() @Min(1000) GANTRY_IDEMPOTENCY_SWEEP_MS: number = 60_000;
}
