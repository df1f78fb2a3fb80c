import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DEPENDENCY_CONDITIONS, DependencyCondition, JOB_STATES, JobState } from '@gantry/domain';
import { ResourcesDto } from './create-job.dto';

/** One rank of the current (or last) attempt: where it runs and the GPU devices it holds there. */
export class PlacementView {
  @ApiProperty({ minimum: 0 }) rank!: number;
  @ApiProperty() nodeId!: string;
  @ApiProperty({
    type: [Number],
    maxItems: 64,
    description:
      'GPU device indices of the node held by this rank (CUDA_VISIBLE_DEVICES); empty for a job without GPUs, or an attempt placed before devices were assigned',
  })
  gpuIndices!: number[];
}

/** The job's retry policy, every field resolved (ADR 0022). */
export class RetryPolicyView {
  @ApiProperty() maxRetries!: number;
  @ApiProperty() backoffSeconds!: number;
  @ApiProperty() maxBackoffSeconds!: number;
  @ApiProperty({ type: [Number] }) retryOnExitCodes!: number[];
}

/** How many of an array's children are in each state. */
export class ArrayChildrenView {
  @ApiProperty() QUEUED!: number;
  @ApiProperty() SCHEDULED!: number;
  @ApiProperty() RUNNING!: number;
  @ApiProperty() SUCCEEDED!: number;
  @ApiProperty() FAILED!: number;
  @ApiProperty() CANCELLED!: number;
}

/** An array's parent (ADR 0025): its state summarises its children's; it is never placed itself. */
export class ArrayView {
  @ApiProperty({ minimum: 1, maximum: 10000 }) size!: number;
  @ApiPropertyOptional({ nullable: true, type: Number, description: 'Most children SCHEDULED or RUNNING at once; null: no cap' }) parallelism!: number | null;
  @ApiProperty({ type: ArrayChildrenView, description: 'Children by state (GET /v1/jobs?arrayOf= lists them)' }) children!: ArrayChildrenView;
}

/** One job this job waits for, as it was created (contract §4.7, ADR 0023). */
export class DependencyView {
  @ApiProperty({ format: 'uuid' }) jobId!: string;
  @ApiProperty({ enum: DEPENDENCY_CONDITIONS }) condition!: DependencyCondition;
}

/** The job resource returned by every job endpoint. */
export class JobView {
  @ApiProperty() id!: string;
  @ApiProperty() owner!: string;
  @ApiProperty() queue!: string;
  @ApiProperty() name!: string;
  @ApiProperty() image!: string;
  @ApiProperty({ type: [String] }) command!: string[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) env!: Record<string, string>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) labels!: Record<string, string>;
  @ApiProperty({ type: ResourcesDto }) resources!: { gpus: number; gpuModel: string | null; cpuCores: number; memoryMiB: number };
  @ApiProperty() nodes!: number;
  @ApiProperty() maxRetries!: number;
  @ApiProperty({ type: RetryPolicyView }) retryPolicy!: RetryPolicyView;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'A job waiting out a retry backoff (pendingReason BACKOFF) is not placed before this',
  })
  notBefore!: string | null;
  @ApiPropertyOptional({ nullable: true, type: Number, description: 'Longest an attempt may run, seconds (DEADLINE_EXCEEDED past it); null: no limit' })
  maxRuntimeSeconds!: number | null;
  @ApiProperty({
    type: [DependencyView],
    description: 'The jobs it waits for (pendingReason DEPENDENCY while any is unmet), upstream job id ascending; empty: none',
  })
  dependsOn!: DependencyView[];
  @ApiProperty({ enum: JOB_STATES }) state!: JobState;
  @ApiProperty() cancelRequested!: boolean;
  @ApiProperty({ description: '0 until first placed, then the current or last attempt' }) attempt!: number;
  @ApiPropertyOptional({ nullable: true, type: String }) pendingReason!: string | null;
  @ApiPropertyOptional({ nullable: true, type: Number }) exitCode!: number | null;
  @ApiPropertyOptional({ nullable: true, type: String }) reason!: string | null;
  @ApiProperty({ type: [String], description: 'Nodes of the current attempt, by gang rank' }) nodeIds!: string[];
  @ApiProperty({ type: [PlacementView], description: 'The current (or last) attempt rank by rank: its node and GPU devices; empty before the first placement' })
  placements!: PlacementView[];
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String }) startedAt!: string | null;
  @ApiPropertyOptional({ format: 'date-time', nullable: true, type: String }) finishedAt!: string | null;
  @ApiPropertyOptional({
    nullable: true,
    type: ArrayView,
    description: "An array's parent: its size, parallelism and children by state; null for any other job",
  })
  array!: ArrayView | null;
  @ApiPropertyOptional({ nullable: true, type: String, format: 'uuid', description: "An array's child: its parent's id" }) arrayOf!: string | null;
  @ApiPropertyOptional({ nullable: true, type: Number, description: "An array's child: its index, 0 .. size - 1 (GANTRY_ARRAY_INDEX)" }) arrayIndex!:
    number | null;
}

export const JOB_EVENT_TYPES = ['CREATED', 'STATE_CHANGED', 'CANCEL_REQUESTED', 'PREEMPTION_REQUESTED', 'REPORT_REJECTED', 'RECONCILED'] as const;
export type JobEventType = (typeof JOB_EVENT_TYPES)[number];

export class JobEventView {
  @ApiProperty() seq!: number;
  @ApiProperty({ enum: JOB_EVENT_TYPES }) type!: JobEventType;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiPropertyOptional({ enum: JOB_STATES }) fromState?: JobState;
  @ApiPropertyOptional({ enum: JOB_STATES }) toState?: JobState;
  @ApiPropertyOptional() attempt?: number;
  @ApiPropertyOptional({ type: [String] }) nodeIds?: string[];
  @ApiPropertyOptional() reason?: string;
}

export class JobEventPage {
  @ApiProperty({ type: [JobEventView] }) items!: JobEventView[];
  @ApiPropertyOptional({ nullable: true, type: String }) nextCursor!: string | null;
}

export class JobPage {
  @ApiProperty({ type: [JobView] }) items!: JobView[];
  @ApiPropertyOptional({ nullable: true, type: String }) nextCursor!: string | null;
}

/**
 * One job event as the live streams (SSE) and `gantry.job-events.v1` carry it: the event with the
 * id of its job. On the per-job stream the SSE id is `seq`; on `/v1/events` it is an opaque position.
 */
export class JobStreamEventView extends JobEventView {
  @ApiProperty({ format: 'uuid' }) jobId!: string;
}

export class JobStreamEventPage {
  @ApiProperty({ type: [JobStreamEventView] }) items!: JobStreamEventView[];
  @ApiProperty({ description: 'Pass as `after` (or as Last-Event-ID when following) to continue from here; present even when the page is empty' })
  nextPosition!: string;
}
