import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, OmitType, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsPositive,
  Matches,
  Max,
  Min,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { QUEUE_NAME_PATTERN } from '@gantry/contracts';
import { PREEMPTION_POLICIES, PreemptionPolicy } from '@gantry/domain';
import { OWNER_PATTERN } from '../tokens/create-token.dto';

/** Most owners one queue may name in allowedOwners. */
export const ALLOWED_OWNERS_MAX = 1000;

export class QuotaDto {
  @ApiProperty({ nullable: true, type: Number, description: 'Most GPUs the queue may hold at once; null = unlimited' })
  @ValidateIf((_o, v) => v !== null)
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  gpus!: number | null;
}

/** Most owners one queue may weigh in ownerWeights. */
export const OWNER_WEIGHTS_MAX = 1000;
export class BorrowingLimitDto {
  @ApiProperty({
    type: Number,
    minimum: 0,
    maximum: 10_000_000,
    description:
      "GPUs a queue with a parent may hold beyond its guarantee (quota.gpus), out of its siblings' unused guarantee; ignored on a queue without a parent",
  })
  @IsInt()
  @Min(0)
  @Max(10_000_000)
  gpus!: number;
}

const PARENT_DOC: ApiPropertyOptions = {
  type: String,
  nullable: true,
  maxLength: 63,
  pattern: QUEUE_NAME_PATTERN.source,
  description:
    "The queue whose cohort this one belongs to (ADR 0039): its quota.gpus becomes a guarantee, and it may borrow its siblings' unused guarantee up to borrowingLimit. A parent has no parent. null or omitted: none (quota.gpus is a hard cap)",
};

const WEIGHT_DOC: ApiPropertyOptions = {
  type: Number,
  default: 1,
  minimum: 0,
  exclusiveMinimum: true,
  maximum: 1000,
  description:
    'Fair-share weight within the priority band: a queue of weight 2 is entitled to twice the share (of decayed GPU usage, and of what runs now) of one of weight 1',
};

const OWNER_WEIGHTS_DOC: ApiPropertyOptions = {
  type: 'object',
  additionalProperties: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1000 },
  maxProperties: OWNER_WEIGHTS_MAX,
  nullable: true,
  description: "Owners' fair-share weights inside the queue, {owner: weight}; an owner not named, or null: 1",
};

const ALLOWED_OWNERS_DOC: ApiPropertyOptions = {
  type: String,
  isArray: true,
  nullable: true,
  maxItems: ALLOWED_OWNERS_MAX,
  uniqueItems: true,
  maxLength: 64,
  pattern: OWNER_PATTERN.source,
  description: 'Owners whose users may submit to the queue (403 for others); null or omitted: everyone. Operators may always submit',
};

const PREEMPTION_DOC: ApiPropertyOptions = {
  enum: PREEMPTION_POLICIES,
  default: 'never',
  description:
    'lowerPriority: a job of this queue that cannot fit may end running attempts of strictly lower bands (they are requeued, reason PREEMPTED, no retry used)',
};

const HOST_IPC_DOC: ApiPropertyOptions = {
  type: Boolean,
  default: false,
  description: "true: the queue's attempts share their node's IPC namespace and /dev/shm (work that needs the host's IPC); false: each attempt has its own",
};

/** Validation of allowedOwners; null passes (everyone). */
function AllowedOwners(): PropertyDecorator {
  return (target, key) => {
    for (const d of [
      IsOptional(),
      IsArray(),
      ArrayMaxSize(ALLOWED_OWNERS_MAX),
      ArrayUnique(),
      Matches(OWNER_PATTERN, { each: true, message: 'allowedOwners must hold owners: 1..64 lowercase letters, digits, ".", "_" or "-"' }),
    ])
      d(target, key);
  };
}

/** ownerWeights: null, or an object of at most OWNER_WEIGHTS_MAX owners, each weighing (0, 1000]. */
function OwnerWeights(): PropertyDecorator {
  const valid = (v: unknown): boolean => {
    if (v === null || v === undefined) return true;
    if (typeof v !== 'object' || Array.isArray(v)) return false;
    const entries = Object.entries(v as Record<string, unknown>);
    return (
      entries.length <= OWNER_WEIGHTS_MAX &&
      entries.every(([owner, w]) => OWNER_PATTERN.test(owner) && typeof w === 'number' && Number.isFinite(w) && w > 0 && w <= 1000)
    );
  };
  return ValidateBy(
    {
      name: 'ownerWeights',
      validator: { validate: valid },
    },
    {
      message: `ownerWeights must be null or an object of at most ${OWNER_WEIGHTS_MAX} owners (1..64 lowercase letters, digits, ".", "_" or "-"), each with a weight above 0 and at most 1000`,
    },
  );
}

export class CreateQueueDto {
  @ApiProperty({ example: 'research', maxLength: 63 })
  @Matches(QUEUE_NAME_PATTERN, { message: 'name must be a lowercase DNS label (1..63 of a-z, 0-9, -)' })
  name!: string;

  @ApiProperty({ minimum: 0, maximum: 100, description: 'Higher bands are served first' })
  @IsInt()
  @Min(0)
  @Max(100)
  priority!: number;

  @ApiPropertyOptional({ type: QuotaDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => QuotaDto)
  quota?: QuotaDto;

  @ApiPropertyOptional(WEIGHT_DOC)
  @IsOptional()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @IsPositive()
  @Max(1000)
  weight?: number;

  @ApiPropertyOptional(ALLOWED_OWNERS_DOC)
  @AllowedOwners()
  allowedOwners?: string[] | null;

  @ApiPropertyOptional(PREEMPTION_DOC)
  @IsOptional()
  @IsIn(PREEMPTION_POLICIES, { message: `preemption must be one of ${PREEMPTION_POLICIES.join(', ')}` })
  preemption?: PreemptionPolicy;

  @ApiPropertyOptional(HOST_IPC_DOC)
  @IsOptional()
  @IsBoolean()
  hostIpc?: boolean;

  @ApiPropertyOptional(OWNER_WEIGHTS_DOC)
  @OwnerWeights()
  ownerWeights?: Record<string, number> | null;
  @ApiPropertyOptional(PARENT_DOC)
  @IsOptional()
  @Matches(QUEUE_NAME_PATTERN, { message: 'parent must be a queue name (a lowercase DNS label) or null' })
  parent?: string | null;

  @ApiPropertyOptional({ type: BorrowingLimitDto, description: 'Default: { "gpus": 0 }' })
  @ValidateIf((_o, v) => v !== undefined)
  @ValidateNested()
  @Type(() => BorrowingLimitDto)
  borrowingLimit?: BorrowingLimitDto;
}

/** Any field of a queue but its name; each optional, validated as at creation. */
export class UpdateQueueDto extends PartialType(OmitType(CreateQueueDto, ['name'] as const)) {}

export class QueueUsageView {
  @ApiProperty() gpusHeld!: number;
  @ApiProperty() jobsQueued!: number;
  @ApiProperty() jobsRunning!: number;
}

export class QueueFairShareView {
  @ApiProperty({
    description:
      "Its entitlement in its band: its weight over the sum of the weights of the band's queues with work (queued jobs or GPUs held), itself counted",
  })
  share!: number;
  @ApiProperty({
    description: "Its decayed GPU usage (half-life GANTRY_FAIRSHARE_HALF_LIFE_HOURS) as a fraction of its band's; 0 when the band has used nothing",
  })
  usage!: number;
  @ApiProperty({
    description:
      "Slurm's fair-share factor 2^(-usage/share): 1 unused, 0.5 used exactly its share, towards 0 the further past it. Within a band, a higher factor is served sooner (the scheduler's key also counts GPUs held now, ADR 0038)",
  })
  factor!: number;
}

export class QueueView {
  @ApiProperty() name!: string;
  @ApiProperty() priority!: number;
  @ApiProperty({ type: QuotaDto }) quota!: { gpus: number | null };
  @ApiProperty({ description: 'Fair-share weight within the priority band' }) weight!: number;
  @ApiProperty({ type: [String], nullable: true, description: 'Owners whose users may submit; null: everyone' }) allowedOwners!: string[] | null;
  @ApiProperty({ enum: PREEMPTION_POLICIES, description: 'Whether its jobs may preempt strictly lower bands' }) preemption!: PreemptionPolicy;
  @ApiProperty({ description: "Whether its attempts share their node's IPC namespace and /dev/shm" }) hostIpc!: boolean;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'number' },
    nullable: true,
    description: "Owners' fair-share weights inside the queue; an owner not named, or null: 1",
  })
  ownerWeights!: Record<string, number> | null;
  @ApiProperty({ type: String, nullable: true, description: 'The queue whose cohort it borrows in; null: none' }) parent!: string | null;
  @ApiProperty({ type: BorrowingLimitDto }) borrowingLimit!: { gpus: number };
  @ApiProperty({ type: QueueUsageView }) usage!: QueueUsageView;
  @ApiProperty({ type: QueueFairShareView, description: 'Its decayed fair share against the other queues of its band' }) fairShare!: QueueFairShareView;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}

export class QueueList {
  @ApiProperty({ type: [QueueView] }) items!: QueueView[];
}
