import { Static } from '@sinclair/typebox';
import { EpochMs, OneOf, OpenObject } from './field-schemas';

export const LIFECYCLE_TYPES = ['JOB_CREATED', 'JOB_STATE_CHANGED', 'CAPACITY_RELEASED'] as const;

/**
 * Internal: something changed that may let the scheduler place more work. One message per write
 * (a batch of creates, a batch of reports), not one per job: it only wakes the scheduler, which
 * then reads the queues itself, so the scheduler does not read its content (nor validate it).
 */
export const JobLifecycleSchema = OpenObject(
  { type: OneOf(LIFECYCLE_TYPES), at: EpochMs() },
  { description: 'gantry.internal.job-lifecycle.v1' },
);

export type JobLifecycleMessage = Static<typeof JobLifecycleSchema>;
