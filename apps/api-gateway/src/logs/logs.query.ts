import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { JOB_LIMITS } from '@gantry/contracts';

/** Most lines `tailLines` may ask for (the agent reads them backwards a chunk at a time). */
export const MAX_TAIL_LINES = 1_000_000;

/** GET /v1/jobs/{id}/logs query (contract 4.4); unknown parameters are rejected like unknown body fields. */
export class LogsQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 2_147_483_647, description: "The attempt whose log to read; default the job's latest" })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(2_147_483_647)
  attempt?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: JOB_LIMITS.nodesMax - 1,
    default: 0,
    description: "The rank (a gang's node) whose log to read; default 0",
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(JOB_LIMITS.nodesMax - 1)
  rank?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TAIL_LINES,
    description: 'Only the last this many lines (then, with follow, what is written after them); default the whole log as kept on the node',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_TAIL_LINES)
  tailLines?: number;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    default: 'false',
    description: 'true: keep the response open and send what the attempt writes until it ends',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  follow?: 'true' | 'false';
}
