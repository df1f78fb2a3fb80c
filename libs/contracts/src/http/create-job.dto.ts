import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsOptional, IsString, Length, Matches, Max, MaxLength, Min, ValidateNested,
} from 'class-validator';
import { IsStringRecord } from './is-string-record';

export const QUEUE_NAME_PATTERN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export class ResourcesDto {
  @ApiProperty({ minimum: 0, maximum: 64, description: 'GPUs per node' })
  @IsInt() @Min(0) @Max(64)
  gpus!: number;

  @ApiPropertyOptional({ nullable: true, description: 'GPU model; omitted or null: any model' })
  @IsOptional() @IsString() @Length(1, 64)
  gpuModel?: string | null;

  @ApiProperty({ minimum: 0, maximum: 1024, description: 'CPU cores per node' })
  @IsInt() @Min(0) @Max(1024)
  cpuCores!: number;

  @ApiProperty({ minimum: 0, maximum: 16777216, description: 'Memory per node, MiB' })
  @IsInt() @Min(0) @Max(16 * 1024 * 1024)
  memoryMiB!: number;
}

/** POST /v1/jobs body (contract §2). Unknown fields are rejected by the global pipe. */
export class CreateJobDto {
  @ApiPropertyOptional({ default: 'default' })
  @IsOptional() @Matches(QUEUE_NAME_PATTERN, { message: 'queue must be a lowercase DNS label' })
  queue?: string;

  @ApiProperty({ maxLength: 253 })
  @IsString() @Length(1, 253)
  name!: string;

  @ApiProperty({ maxLength: 512 })
  @IsString() @Length(1, 512)
  image!: string;

  @ApiProperty({ type: [String], minItems: 1, maxItems: 256 })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(256) @IsString({ each: true }) @MaxLength(4096, { each: true })
  command!: string[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional() @IsStringRecord({ maxEntries: 128, maxKeyLength: 256, maxValueLength: 32768, keyPattern: /^[A-Za-z_][A-Za-z0-9_]*$/ })
  env?: Record<string, string>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' } })
  @IsOptional() @IsStringRecord({ maxEntries: 64, maxKeyLength: 63, maxValueLength: 256 })
  labels?: Record<string, string>;

  @ApiPropertyOptional({ type: ResourcesDto, description: 'Per node. Default: 0 GPUs, 1 core, 1024 MiB' })
  @IsOptional() @ValidateNested() @Type(() => ResourcesDto)
  resources?: ResourcesDto;

  @ApiPropertyOptional({ minimum: 1, maximum: 1024, default: 1, description: 'Gang size' })
  @IsOptional() @IsInt() @Min(1) @Max(1024)
  nodes?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 10, default: 0, description: 'Re-placements after a lost attempt' })
  @IsOptional() @IsInt() @Min(0) @Max(10)
  maxRetries?: number;
}

export const DEFAULT_RESOURCES: Readonly<Required<ResourcesDto>> = { gpus: 0, gpuModel: null, cpuCores: 1, memoryMiB: 1024 };
