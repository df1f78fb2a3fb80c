import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
  ValidationOptions,
  isFQDN,
  isIP,
  registerDecorator,
} from 'class-validator';
import { MAX_GPU_INDEX } from '@gantry/domain';

/**
 * A node's declared inventory (contract §5.2, ADR 0035): what placement may ever believe of it.
 * The bounds are the heartbeat's own (a node cannot report more than these either).
 */
export const INVENTORY_LIMITS = { gpusMax: MAX_GPU_INDEX + 1, gpuModelMax: 64, cpuCoresMax: 65_536, memoryMiBMax: 2 ** 40, addressMax: 253 } as const;

/** A GPU model name: printable, no control characters (it is shown and compared, never parsed). */
const GPU_MODEL_PATTERN = /^[\x20-\x7e]+$/;

/** A host name or an IP address (v4 or v6), nothing else: the gateway dials it. */
function IsNodeAddress(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isNodeAddress',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `address must be a host name or an IP address of at most ${INVENTORY_LIMITS.addressMax} characters`, ...options },
      validator: {
        validate: (v: unknown) =>
          typeof v === 'string' && v.length <= INVENTORY_LIMITS.addressMax && (isIP(v) || isFQDN(v, { require_tld: false, allow_underscores: false })),
      },
    });
}

export class DeclaredGpusDto {
  @ApiProperty({
    minLength: 1,
    maxLength: INVENTORY_LIMITS.gpuModelMax,
    example: 'H100',
    description: "The GPU model, as the node reports it (nvidia-smi's name, shortened as the agent does)",
  })
  @IsString()
  @Length(1, INVENTORY_LIMITS.gpuModelMax)
  @Matches(GPU_MODEL_PATTERN, { message: 'gpus.model must be printable ASCII' })
  model!: string;

  @ApiProperty({ minimum: 1, maximum: INVENTORY_LIMITS.gpusMax, description: 'GPUs of that model' })
  @IsInt()
  @Min(1)
  @Max(INVENTORY_LIMITS.gpusMax)
  count!: number;
}

const GPUS_DOC = 'GPUs the node has; omitted or null: none';
const CPU_DOC = 'CPU cores';
const MEMORY_DOC = 'Memory, MiB';
const ADDRESS_DOC =
  'Where the node listens (host name or IP): the gateway reads logs only there, and a gang whose rank 0 is here gets it as MASTER_ADDR. Omitted or null: the first address the node reports is pinned';

/** The `inventory` of an enrollment: what placement may ever believe of the node. */
export class NodeInventoryDto {
  @ApiPropertyOptional({ type: DeclaredGpusDto, nullable: true, description: GPUS_DOC })
  // IsObject: an array would pass ValidateNested element by element.
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DeclaredGpusDto)
  gpus?: DeclaredGpusDto | null;

  @ApiProperty({ minimum: 0, maximum: INVENTORY_LIMITS.cpuCoresMax, description: CPU_DOC })
  @IsInt()
  @Min(0)
  @Max(INVENTORY_LIMITS.cpuCoresMax)
  cpuCores!: number;

  @ApiProperty({ minimum: 0, maximum: INVENTORY_LIMITS.memoryMiBMax, description: MEMORY_DOC })
  @IsInt()
  @Min(0)
  @Max(INVENTORY_LIMITS.memoryMiBMax)
  memoryMiB!: number;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: INVENTORY_LIMITS.addressMax, description: ADDRESS_DOC })
  @IsOptional()
  @IsNodeAddress()
  address?: string | null;
}

/** PATCH /v1/nodes/{id} `declared`: the fields given replace the pinned ones (JSON merge patch); the rest stay. */
export class InventoryPatchDto {
  @ApiPropertyOptional({ type: DeclaredGpusDto, nullable: true, description: 'GPUs the node has; omitted: unchanged; null: none' })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsObject()
  @ValidateNested()
  @Type(() => DeclaredGpusDto)
  gpus?: DeclaredGpusDto | null;

  @ApiPropertyOptional({ minimum: 0, maximum: INVENTORY_LIMITS.cpuCoresMax, description: `${CPU_DOC}; omitted: unchanged` })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(INVENTORY_LIMITS.cpuCoresMax)
  cpuCores?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: INVENTORY_LIMITS.memoryMiBMax, description: `${MEMORY_DOC}; omitted: unchanged` })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(INVENTORY_LIMITS.memoryMiBMax)
  memoryMiB?: number;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    maxLength: INVENTORY_LIMITS.addressMax,
    description: `${ADDRESS_DOC.split('. Omitted')[0]}. Omitted: unchanged; null: the address the node reports is pinned (now, if it has reported one)`,
  })
  @ValidateIf((_o, v) => v !== null && v !== undefined)
  @IsNodeAddress()
  address?: string | null;
}

/** PATCH /v1/nodes/{id} (operators). */
export class UpdateNodeDto {
  @ApiProperty({ type: InventoryPatchDto, description: "Changes to the node's pinned inventory; a node with none pinned yet needs cpuCores and memoryMiB" })
  @IsObject()
  @ValidateNested()
  @Type(() => InventoryPatchDto)
  declared!: InventoryPatchDto;
}

/** POST /v1/nodes/{id}/enrollment body (optional). */
export class EnrollNodeDto {
  @ApiPropertyOptional({
    type: NodeInventoryDto,
    description:
      "The node's inventory, pinned (replacing any pinned before): placement never believes more. Omitted: the pinned one stays, or the node's first report is pinned",
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => NodeInventoryDto)
  inventory?: NodeInventoryDto;
}

export class DeclaredGpusView {
  @ApiProperty() model!: string;
  @ApiProperty() count!: number;
}

/** A node's pinned inventory as GET /v1/nodes/{id} shows it. */
export class NodeInventoryView {
  @ApiProperty({ type: DeclaredGpusView, nullable: true, description: 'null: no GPUs' }) gpus!: DeclaredGpusView | null;
  @ApiProperty() cpuCores!: number;
  @ApiProperty() memoryMiB!: number;
  @ApiProperty({ type: String, nullable: true, description: 'null: none pinned yet' }) address!: string | null;
}
