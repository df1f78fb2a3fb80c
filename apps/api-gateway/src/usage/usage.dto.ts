import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { MAX_USAGE_BUCKETS, USAGE_GRANULARITIES, USAGE_GROUP_KEYS, UsageRowView } from '@gantry/domain';

const WHEN = 'An ISO 8601 date (UTC midnight) or date-time with a zone, on a whole UTC hour';

/** GET /v1/usage query: shapes here, meaning in checkUsageQuery (libs/domain); unknown parameters are rejected. */
export class UsageQuery {
  @ApiProperty({ description: `${WHEN}; the range's start, included`, example: '2026-01-01', maxLength: 40 })
  @IsString()
  @MaxLength(40)
  from!: string;
  @ApiProperty({ description: `${WHEN}; the range's end, excluded`, example: '2026-02-01T00:00:00Z', maxLength: 40 })
  @IsString()
  @MaxLength(40)
  to!: string;
  @ApiPropertyOptional({
    description: `Comma-separated, each at most once: ${USAGE_GROUP_KEYS.join(', ')}; none: one row per bucket`,
    example: 'owner,queue',
    maxLength: 64,
  })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  groupBy?: string;
  @ApiPropertyOptional({ enum: USAGE_GRANULARITIES, default: 'day', description: `Bucket size (UTC); at most ${MAX_USAGE_BUCKETS} buckets in the range` })
  @IsOptional()
  @IsString()
  @MaxLength(16)
  granularity?: string;
}

export class UsageRow implements UsageRowView {
  @ApiProperty({ format: 'date-time', description: 'Start of the bucket (UTC); only the part of it inside [from, to) is counted' }) start!: string;
  @ApiPropertyOptional({ description: 'Present when grouped by owner' }) owner?: string;
  @ApiPropertyOptional({ description: 'Present when grouped by queue' }) queue?: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Present when grouped by gpuModel; null for ranks without GPUs' }) gpuModel?: string | null;
  @ApiProperty({ minimum: 0, description: 'GPUs x seconds held in the bucket, exact to the millisecond; running attempts count up to min(to, now)' })
  gpuSeconds!: number;
  @ApiProperty({ minimum: 0, description: 'CPU cores x seconds held in the bucket, exact to the millisecond' }) cpuSeconds!: number;
  @ApiProperty({ minimum: 0, description: 'Attempts that started in the bucket' }) attempts!: number;
  @ApiProperty({ minimum: 0, description: 'Jobs whose first attempt started in the bucket' }) jobs!: number;
}

export class UsageReport {
  @ApiProperty({ type: [UsageRow], maxItems: 100_000_000 }) items!: UsageRow[];
}
