import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { ARRAY_SIZE_MAX, DEPENDENCY_CONDITIONS, DEPENDS_ON_MAX, DependencyCondition } from '@gantry/domain';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsStringRecord, StringRecordLimits } from './is-string-record';
import { AGENT_SET_ENV_NAMES } from './agent-set-env';
import { MaxTotalBytes } from './max-total-bytes';
import { HasNoAgentSetEnvNames, IsJobImage } from './job-body-rules';
import { NO_IMAGE } from '../kafka/attempt-end-reasons';
import { JOB_ID_PATTERN } from '../kafka/field-schemas';

export const QUEUE_NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The bounds of POST /v1/jobs, shared by the DTOs below and any hand-written check that must agree with them. */
export const JOB_LIMITS = {
  nameMax: 253,
  imageMax: 512,
  commandMaxItems: 256,
  commandArgMax: 4096,
  /** UTF-8 bytes of every argument together (contract §4.2). */
  commandTotalBytesMax: 64 * 1024,
  /** UTF-8 bytes of every env key and value together (contract §4.2). */
  envTotalBytesMax: 64 * 1024,
  nodesMax: 1024,
  maxRetriesMax: 10,
  /** One year: a deadline, not a way to run forever. */
  maxRuntimeSecondsMax: 31_536_000,
  /** Retry policy (ADR 0022): backoff bounds, seconds, and the exit codes a policy may list. */
  backoffSecondsMax: 3600,
  maxBackoffSecondsMax: 86_400,
  retryExitCodeMin: 1,
  retryExitCodeMax: 255,
  retryOnExitCodesMaxItems: 32,
  gpusMax: 64,
  gpuModelMax: 64,
  cpuCoresMax: 1024,
  memoryMiBMax: 16 * 1024 * 1024,
} as const;

/**
 * A string record as the client sent it. Left to itself class-transformer rebuilds a plain object
 * key by key, skipping every key that names a function on the new object (toString, valueOf, ...)
 * and throwing a TypeError (a 500) on one named `constructor`; the fast parser kept them.
 * `@Type(() => Boolean)` keeps it from walking the record (it converts with Boolean(), the one
 * conversion that calls nothing on the value: String() would call a `toString` key), and a
 * transform then puts back the record as sent, for IsStringRecord to check.
 */
const AsSentRecord = (): PropertyDecorator => (target, key) => {
  Type(() => Boolean)(target, key);
  Transform(({ key: k, obj }: { key: string; obj: Record<string, unknown> }) => obj[k], { toClassOnly: true })(target, key);
};

export const ENV_LIMITS: StringRecordLimits = { maxEntries: 128, maxKeyLength: 256, maxValueLength: 32768, keyPattern: /^[A-Za-z_][A-Za-z0-9_]*$/ };
export const LABEL_LIMITS: StringRecordLimits = { maxEntries: 64, maxKeyLength: 63, maxValueLength: 256 };

export class ResourcesDto {
  @ApiProperty({ minimum: 0, maximum: JOB_LIMITS.gpusMax, description: 'GPUs per node' })
  @IsInt()
  @Min(0)
  @Max(JOB_LIMITS.gpusMax)
  gpus!: number;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: JOB_LIMITS.gpuModelMax,
    description: 'GPU model; omitted or null: any model',
    example: 'H100',
  })
  @IsOptional()
  @IsString()
  @Length(1, JOB_LIMITS.gpuModelMax)
  gpuModel?: string | null;

  @ApiProperty({ minimum: 0, maximum: JOB_LIMITS.cpuCoresMax, description: 'CPU cores per node' })
  @IsInt()
  @Min(0)
  @Max(JOB_LIMITS.cpuCoresMax)
  cpuCores!: number;

  @ApiProperty({ minimum: 0, maximum: JOB_LIMITS.memoryMiBMax, description: 'Memory per node, MiB' })
  @IsInt()
  @Min(0)
  @Max(JOB_LIMITS.memoryMiBMax)
  memoryMiB!: number;
}

/** When a failed attempt is tried again (contract §4.7, ADR 0022). */
export class RetryPolicyDto {
  @ApiPropertyOptional({
    minimum: 0,
    maximum: JOB_LIMITS.maxRetriesMax,
    default: 0,
    description: 'Attempts after the first, lost or failed with a listed code; the top-level maxRetries is a shorthand (both given: they must agree)',
  })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(JOB_LIMITS.maxRetriesMax)
  maxRetries?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: JOB_LIMITS.backoffSecondsMax,
    default: 10,
    description: 'Backoff ceiling of the first retry, seconds; it doubles per retry and the wait is drawn between half of it and all of it',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(JOB_LIMITS.backoffSecondsMax)
  backoffSeconds?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: JOB_LIMITS.maxBackoffSecondsMax, default: 600, description: 'No backoff ceiling grows past this, seconds' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(JOB_LIMITS.maxBackoffSecondsMax)
  maxBackoffSeconds?: number;

  @ApiPropertyOptional({
    type: [Number],
    maxItems: JOB_LIMITS.retryOnExitCodesMaxItems,
    default: [],
    description: `Exit codes (${JOB_LIMITS.retryExitCodeMin}..${JOB_LIMITS.retryExitCodeMax}) retried; any other failure ends the job. An attempt lost with its node is always retried while retries remain`,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(JOB_LIMITS.retryOnExitCodesMaxItems)
  @IsInt({ each: true })
  @Min(JOB_LIMITS.retryExitCodeMin, { each: true })
  @Max(JOB_LIMITS.retryExitCodeMax, { each: true })
  retryOnExitCodes?: number[];
}

/** One job this job waits for (contract §4.7, ADR 0023). */
export class DependencyDto {
  @ApiProperty({ format: 'uuid', maxLength: 36, description: 'A job the caller can see, created before this one' })
  @Matches(JOB_ID_PATTERN, { message: 'jobId must be a job id (UUID)' })
  jobId!: string;

  @ApiProperty({ enum: DEPENDENCY_CONDITIONS, description: 'succeeded: that job must end SUCCEEDED; finished: any end will do' })
  @IsIn(DEPENDENCY_CONDITIONS)
  condition!: DependencyCondition;
}

/** An array of jobs (contract §4.7, ADR 0025): one parent and `size` children, child i with GANTRY_ARRAY_INDEX=i. */
export class ArrayDto {
  @ApiProperty({ minimum: 1, maximum: ARRAY_SIZE_MAX, description: 'How many children' })
  @IsInt()
  @Min(1)
  @Max(ARRAY_SIZE_MAX)
  size!: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: ARRAY_SIZE_MAX,
    description: 'Most children SCHEDULED or RUNNING at once (pendingReason ARRAY_PARALLELISM); omitted: no cap',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(ARRAY_SIZE_MAX)
  parallelism?: number;
}

/** POST /v1/jobs body (contract §2). Unknown fields are rejected by the global pipe. */
export class CreateJobDto {
  @ApiPropertyOptional({ default: 'default', maxLength: 63 })
  @IsOptional()
  @Matches(QUEUE_NAME_PATTERN, { message: 'queue must be a lowercase DNS label' })
  queue?: string;

  @ApiProperty({ maxLength: JOB_LIMITS.nameMax })
  @IsString()
  @Length(1, JOB_LIMITS.nameMax)
  name!: string;

  @ApiPropertyOptional({
    default: NO_IMAGE,
    maxLength: JOB_LIMITS.imageMax,
    description: `\`${NO_IMAGE}\` (the command runs in the node's sandbox) or an image reference, \`[host[:port]/]path[:tag][@digest]\` by the distribution grammar`,
  })
  @IsOptional()
  @IsString()
  @Length(1, JOB_LIMITS.imageMax)
  @IsJobImage()
  image?: string;

  @ApiProperty({
    type: [String],
    minItems: 1,
    maxItems: JOB_LIMITS.commandMaxItems,
    description: `At most ${JOB_LIMITS.commandTotalBytesMax} bytes (UTF-8) in all`,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(JOB_LIMITS.commandMaxItems)
  @IsString({ each: true })
  @MaxLength(JOB_LIMITS.commandArgMax, { each: true })
  @MaxTotalBytes(JOB_LIMITS.commandTotalBytesMax)
  command!: string[];

  @ApiPropertyOptional({
    type: 'object',
    maxProperties: ENV_LIMITS.maxEntries,
    additionalProperties: { type: 'string', maxLength: ENV_LIMITS.maxValueLength },
    description: `Names match ${ENV_LIMITS.keyPattern!.source}, at most ${ENV_LIMITS.maxKeyLength} characters; at most ${JOB_LIMITS.envTotalBytesMax} bytes (UTF-8) of keys and values in all. Names the agent sets are refused: GANTRY_*, ${[...AGENT_SET_ENV_NAMES].join(', ')}. With an image, no value may hold a line break`,
  })
  @IsOptional()
  @IsStringRecord(ENV_LIMITS)
  @MaxTotalBytes(JOB_LIMITS.envTotalBytesMax)
  @HasNoAgentSetEnvNames()
  @AsSentRecord()
  env?: Record<string, string>;

  @ApiPropertyOptional({
    type: 'object',
    maxProperties: LABEL_LIMITS.maxEntries,
    additionalProperties: { type: 'string', maxLength: LABEL_LIMITS.maxValueLength },
    description: `Keys of at most ${LABEL_LIMITS.maxKeyLength} characters`,
  })
  @IsOptional()
  @IsStringRecord(LABEL_LIMITS)
  @AsSentRecord()
  labels?: Record<string, string>;

  @ApiPropertyOptional({ type: ResourcesDto, description: 'Per node. Default: 0 GPUs, 1 core, 1024 MiB' })
  // IsObject: an array of resource objects would pass ValidateNested element by element.
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ResourcesDto)
  resources?: ResourcesDto;

  @ApiPropertyOptional({ minimum: 1, maximum: JOB_LIMITS.nodesMax, default: 1, description: 'Gang size' })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(JOB_LIMITS.nodesMax)
  nodes?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: JOB_LIMITS.maxRetriesMax, default: 0, description: 'Shorthand for retryPolicy.maxRetries' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(JOB_LIMITS.maxRetriesMax)
  maxRetries?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: JOB_LIMITS.maxRuntimeSecondsMax,
    description:
      'Longest an attempt may run, seconds: the agent then kills it and the job ends FAILED with reason DEADLINE_EXCEEDED (not retried). Absent: no limit',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(JOB_LIMITS.maxRuntimeSecondsMax)
  maxRuntimeSeconds?: number;

  @ApiPropertyOptional({ type: RetryPolicyDto, description: 'Absent: maxRetries (or 0) retries of lost attempts only, backoff 10 s up to 600 s' })
  // IsObject: as for resources, an array would pass ValidateNested element by element.
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => RetryPolicyDto)
  retryPolicy?: RetryPolicyDto;

  @ApiPropertyOptional({
    type: [DependencyDto],
    maxItems: DEPENDS_ON_MAX,
    description:
      'Jobs to wait for (pendingReason DEPENDENCY); one that can no longer be met ends this job FAILED, reason DEPENDENCY_FAILED. Each job at most once',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(DEPENDS_ON_MAX)
  @ArrayUnique((d: DependencyDto) => (typeof d?.jobId === 'string' ? d.jobId.toLowerCase() : d?.jobId), { message: 'dependsOn names a job twice' })
  @ValidateNested({ each: true })
  @Type(() => DependencyDto)
  dependsOn?: DependencyDto[];

  @ApiPropertyOptional({
    type: ArrayDto,
    description:
      'Create an array: this job becomes the parent (never placed; its state summarises its children) of `size` children with this spec. Not with dependsOn',
  })
  // IsObject: as for resources, an array would pass ValidateNested element by element.
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ArrayDto)
  array?: ArrayDto;
}

export const DEFAULT_RESOURCES: Readonly<Required<ResourcesDto>> = { gpus: 0, gpuModel: null, cpuCores: 1, memoryMiB: 1024 };
