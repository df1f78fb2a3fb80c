import { IsIn, IsInt, IsString, Min } from 'class-validator';

export const LIFECYCLE_TYPES = ['JOB_CREATED', 'JOB_STATE_CHANGED', 'CAPACITY_RELEASED'] as const;

/** Internal: something changed that may let the scheduler place more work. */
export class JobLifecycleMessage {
  @IsIn(LIFECYCLE_TYPES) type!: (typeof LIFECYCLE_TYPES)[number];
  @IsString() jobId!: string;
  @IsInt() @Min(0) at!: number;
}
