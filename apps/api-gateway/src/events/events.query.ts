import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { QUEUE_NAME_PATTERN } from '@gantry/contracts';

/** GET /v1/events query; unknown parameters are rejected like unknown body fields. */
export class EventsQuery {
  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false', description: 'true: a live SSE stream instead of a page' })
  @IsOptional()
  @IsIn(['true', 'false'])
  follow?: 'true' | 'false';

  @ApiPropertyOptional({ description: "Only this queue's jobs", maxLength: 63 })
  @IsOptional()
  @Matches(QUEUE_NAME_PATTERN)
  queue?: string;

  @ApiPropertyOptional({ description: 'A position (an SSE id or a nextPosition): start after it' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  after?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 100, description: 'Page size (without follow)' })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}
