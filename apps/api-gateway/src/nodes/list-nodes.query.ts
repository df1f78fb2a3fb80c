import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';
import { NODE_HEALTH, NodeHealth } from '@gantry/domain';

/** GET /v1/nodes query; unknown parameters are rejected like unknown body fields. */
export class ListNodesQuery {
  @ApiPropertyOptional({ enum: NODE_HEALTH }) @IsOptional() @IsIn(NODE_HEALTH) health?: NodeHealth;
  @ApiPropertyOptional({ example: 'H100' }) @IsOptional() @IsString() @Length(1, 64) gpuModel?: string;
  @ApiPropertyOptional({ example: 'zone-a' }) @IsOptional() @IsString() @Length(1, 64) zone?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
  @ApiPropertyOptional({ description: 'Opaque; from the previous page' }) @IsOptional() @IsString() @MaxLength(1024) cursor?: string;
}
