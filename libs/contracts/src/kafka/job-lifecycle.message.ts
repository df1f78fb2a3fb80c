import { Static } from '@sinclair/typebox';
import { EpochMs, OneOf, OpenObject } from './field-schemas';
import { messageParser } from './message-parser';

export const LIFECYCLE_TYPES = ['JOB_CREATED', 'JOB_STATE_CHANGED', 'CAPACITY_RELEASED'] as const;
export type LifecycleType = (typeof LIFECYCLE_TYPES)[number];

/**
 * Internal: something changed that may let the scheduler place more work. Wake-ups coalesce (see
 * WakeUpSender in @gantry/messaging): one message stands for any number of creates or reports. The
 * scheduler reads the queues itself; of the message it uses only the kind, to tell new work
 * (JOB_CREATED, which cannot fit where nothing fitted a moment ago unless it is smaller) from
 * freed capacity.
 */
export const JobLifecycleSchema = OpenObject({ type: OneOf(LIFECYCLE_TYPES), at: EpochMs() }, { description: 'gantry.internal.job-lifecycle.v1' });

export type JobLifecycleMessage = Static<typeof JobLifecycleSchema>;

/** Parses one gantry.internal.job-lifecycle.v1 value. */
export const parseJobLifecycle = messageParser(JobLifecycleSchema);
