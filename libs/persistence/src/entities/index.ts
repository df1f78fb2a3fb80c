import { AttemptNodeEntity } from './attempt-node.entity';
import { JobEventEntity } from './job-event.entity';
import { JobEntity } from './job.entity';
import { NodeEntity, ReportedHardwareRecord } from './node.entity';
import { OutboxEntity } from './outbox.entity';

export { AttemptNodeEntity, JobEventEntity, JobEntity, NodeEntity, OutboxEntity };
export type { ReportedHardwareRecord };
export const ENTITIES = [JobEntity, JobEventEntity, NodeEntity, AttemptNodeEntity, OutboxEntity];
