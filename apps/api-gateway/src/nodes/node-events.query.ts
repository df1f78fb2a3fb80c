import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** GET /v1/nodes/{id}/events query. */
export class NodeEventsQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 100 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
  @ApiPropertyOptional({ description: 'Opaque; from the previous page' }) @IsOptional() @IsString() @MaxLength(1024) cursor?: string;
}
