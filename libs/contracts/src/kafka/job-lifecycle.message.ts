import { IsIn, IsInt, Min } from 'class-validator';

export const LIFECYCLE_TYPES = ['JOB_CREATED', 'JOB_STATE_CHANGED', 'CAPACITY_RELEASED'] as const;

/**
 * Internal: something changed that may let the scheduler place more work. One message per write
 * (a batch of creates, a batch of reports), not one per job: it only wakes the scheduler, which
 * then reads the queues itself.
 */
export class JobLifecycleMessage {
  @IsIn(LIFECYCLE_TYPES) type!: (typeof LIFECYCLE_TYPES)[number];
  @IsInt() @Min(0) at!: number;
}
