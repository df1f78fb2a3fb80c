import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { JOB_ID_PATTERN, QUEUE_NAME_PATTERN } from '@gantry/contracts';
import { JOB_STATES, JobState } from '@gantry/domain';

/** GET /v1/jobs query; unknown parameters are rejected like unknown body fields. */
export class ListJobsQuery {
  @ApiPropertyOptional({ maxLength: 63 }) @IsOptional() @Matches(QUEUE_NAME_PATTERN) queue?: string;
  @ApiPropertyOptional({ enum: JOB_STATES }) @IsOptional() @IsIn(JOB_STATES) state?: JobState;
  @ApiPropertyOptional({ description: 'Operators only; users always see their own jobs' }) @IsOptional() @IsString() @MaxLength(64) owner?: string;
  @ApiPropertyOptional({ format: 'uuid', maxLength: 36, description: "Only the children of this array's parent (ADR 0025), by index" })
  @IsOptional()
  @Matches(JOB_ID_PATTERN, { message: 'arrayOf must be a job id (UUID)' })
  arrayOf?: string;
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
  @ApiPropertyOptional({ description: 'Opaque; from the previous page' }) @IsOptional() @IsString() @MaxLength(1024) cursor?: string;
}
