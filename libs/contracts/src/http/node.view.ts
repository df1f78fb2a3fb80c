import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { INVENTORY_RESOURCES, InventoryResource, NODE_HEALTH, NodeHealth } from '@gantry/domain';
import {
  CpuTelemetry,
  CpuTelemetrySchema,
  GpuTelemetry,
  GpuTelemetrySchema,
  MemoryTelemetry,
  MemoryTelemetrySchema,
  RunningAttempt,
  RunningAttemptSchema,
} from '../kafka/heartbeat.message';
import { openApiSchema } from '../kafka/openapi-schema';
import { NodeInventoryView } from './node-inventory.dto';

/** Why a cordoned node is: an operator's cordon, a drain, or start timeouts in a row (ADR 0035). */
export const CORDON_REASONS = ['OPERATOR', 'DRAIN', 'START_FAILURES'] as const;
export type CordonReason = (typeof CORDON_REASONS)[number];

export class NodeGpusView {
  @ApiPropertyOptional({ nullable: true, type: String, description: 'null for a node without GPUs' }) model!: string | null;
  @ApiProperty({
    description: 'Healthy GPUs of the model that placement counts: the lesser of the declared (pinned) count and what the node reports (ADR 0035)',
  })
  total!: number;
  @ApiProperty({ description: 'GPUs held by placed work' }) allocated!: number;
}

/** The node's latest heartbeat as received (the live part; never stored durably). */
export class NodeTelemetryView {
  @ApiProperty({ format: 'date-time', description: 'When the agent sent the beat (its clock)' }) sentAt!: string;
  @ApiProperty({ format: 'date-time', description: 'When the control plane wrote it (its clock)' }) receivedAt!: string;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description:
      'sentAt of the beat that carried the telemetry below (beats carry it when it changes and every GANTRY_TELEMETRY_EVERY beats); null when none has arrived yet',
  })
  telemetryAt!: string | null;
  // The heartbeat's own schemas (libs/contracts/src/kafka): the API shows what the agent sent.
  @ApiProperty({ type: 'array', items: openApiSchema(GpuTelemetrySchema), description: 'Empty while no telemetry has arrived' }) gpus!: GpuTelemetry[];
  @ApiProperty({ ...openApiSchema(CpuTelemetrySchema), nullable: true }) cpu!: CpuTelemetry | null;
  @ApiProperty({ ...openApiSchema(MemoryTelemetrySchema), nullable: true }) memory!: MemoryTelemetry | null;
  @ApiPropertyOptional({
    type: 'array',
    items: openApiSchema(RunningAttemptSchema),
    description: 'Every attempt the agent said it was executing. Operators only: a user sees no job ids',
  })
  running?: RunningAttempt[];
}

/** The node resource of GET /v1/nodes and GET /v1/nodes/{id}. */
export class NodeView {
  @ApiProperty() id!: string;
  @ApiProperty() zone!: string;
  @ApiProperty() rack!: string;
  @ApiProperty({ enum: NODE_HEALTH, description: 'From heartbeat silence: DEGRADED after GANTRY_NODE_SUSPECT_MS, UNHEALTHY after GANTRY_NODE_DEAD_MS' })
  health!: NodeHealth;
  @ApiProperty({ description: 'A cordoned node gets no new work' }) cordoned!: boolean;
  @ApiProperty({
    enum: CORDON_REASONS,
    nullable: true,
    type: String,
    description:
      'Why it is cordoned: OPERATOR (POST cordon), DRAIN, or START_FAILURES (GANTRY_NODE_START_FAILURES start timeouts in a row); null when it is not. An uncordon clears it',
  })
  cordonReason!: CordonReason | null;
  @ApiProperty({ description: 'Ranks in a row that timed out starting here (START_TIMEOUT); a start resets it, and so does an uncordon' })
  startFailures!: number;
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'A drain is pending (POST /v1/nodes/{id}/drain): at this time what still runs here is ended and requeued; null: none',
  })
  drainDeadline!: string | null;
  @ApiProperty({ type: NodeGpusView }) gpus!: NodeGpusView;
  @ApiProperty({ description: 'CPU cores placement counts: the lesser of declared and reported' }) cpuCores!: number;
  @ApiProperty({ description: 'Memory placement counts, MiB: the lesser of declared and reported' }) memoryMiB!: number;
  @ApiProperty({
    type: NodeInventoryView,
    nullable: true,
    description:
      'The pinned inventory: declared at enrollment or with PATCH, else the first the node reported; null while neither. Placement never believes more',
  })
  declared!: NodeInventoryView | null;
  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...INVENTORY_RESOURCES] },
    description: 'What the node reports beyond its pinned inventory (more GPUs, cores or memory, another address): shown and counted, never believed',
  })
  exceeded!: InventoryResource[];
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'When the control plane last heard the node; null if not within the live-state retention',
  })
  lastHeartbeatAt!: string | null;
  @ApiPropertyOptional({ nullable: true, type: NodeTelemetryView }) telemetry!: NodeTelemetryView | null;
  @ApiProperty({ format: 'date-time' }) firstSeenAt!: string;
}

export class NodePage {
  @ApiProperty({ type: [NodeView] }) items!: NodeView[];
  @ApiPropertyOptional({ nullable: true, type: String, description: 'A page may hold fewer than limit items and still have a next page' })
  nextCursor!: string | null;
}

export const NODE_EVENT_TYPES = ['HEALTH_CHANGED', 'EVICTED', 'CORDONED', 'UNCORDONED', 'DRAINED'] as const;
export type NodeEventType = (typeof NODE_EVENT_TYPES)[number];

/** POST /v1/nodes/{id}/drain body. */
export class DrainNodeDto {
  @ApiProperty({
    minimum: 0,
    maximum: 86_400,
    description: 'Seconds the attempts on the node may go on before they are ended and requeued (reason NODE_DRAINED, no retry used)',
  })
  @IsInt()
  @Min(0)
  @Max(86_400)
  gracePeriodSeconds!: number;
}

/**
 * One entry of a node's history. Health changes are decided by the failure detector's leader from
 * the silence it would have heard, and written on changes only, never per beat.
 */
export class NodeEventView {
  @ApiProperty({ description: 'Increasing within the node (not contiguous)' }) id!: number;
  @ApiProperty({ enum: NODE_EVENT_TYPES }) type!: NodeEventType;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiPropertyOptional({ enum: NODE_HEALTH }) fromHealth?: NodeHealth;
  @ApiPropertyOptional({ enum: NODE_HEALTH }) toHealth?: NodeHealth;
  @ApiPropertyOptional({
    description:
      'HEALTH_CHANGED: HEARD, SILENT_PAST_SUSPECT, SILENT_PAST_DEAD, PARTITION_HELD, PARTITION_HOLD_EXPIRED. EVICTED: NODE_LOST, PARTITION_HOLD_EXPIRED. CORDONED: DRAIN when a drain cordoned it, START_FAILURES when start timeouts in a row did. DRAINED: NODE_DRAINED',
  })
  reason?: string;
  @ApiPropertyOptional({ type: [String], description: 'EVICTED, DRAINED: the jobs whose attempts on this node were ended. Operators only' }) jobIds?: string[];
}

export class NodeEventPage {
  @ApiProperty({ type: [NodeEventView] }) items!: NodeEventView[];
  @ApiPropertyOptional({ nullable: true, type: String }) nextCursor!: string | null;
}
