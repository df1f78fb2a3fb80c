import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsNumber, IsOptional, IsPositive, Matches, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import { QUEUE_NAME_PATTERN } from '@gantry/contracts';

export class QuotaDto {
  @ApiProperty({ nullable: true, type: Number, description: 'Most GPUs the queue may hold at once; null = unlimited' })
  @ValidateIf((_o, v) => v !== null) @IsInt() @Min(0) @Max(10_000_000)
  gpus!: number | null;
}

const WEIGHT_DOC: ApiPropertyOptions = {
  type: Number, default: 1, minimum: 0, exclusiveMinimum: true, maximum: 1000,
  description: 'Fair-share weight within the priority band: a queue of weight 2 is entitled to twice the dominant share of one of weight 1',
};

export class CreateQueueDto {
  @ApiProperty({ example: 'research', maxLength: 63 })
  @Matches(QUEUE_NAME_PATTERN, { message: 'name must be a lowercase DNS label (1..63 of a-z, 0-9, -)' })
  name!: string;

  @ApiProperty({ minimum: 0, maximum: 100, description: 'Higher bands are served first' })
  @IsInt() @Min(0) @Max(100)
  priority!: number;

  @ApiPropertyOptional({ type: QuotaDto })
  @IsOptional() @ValidateNested() @Type(() => QuotaDto)
  quota?: QuotaDto;

  @ApiPropertyOptional(WEIGHT_DOC)
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @IsPositive() @Max(1000)
  weight?: number;
}

export class UpdateQueueDto {
  @ApiPropertyOptional({ minimum: 0, maximum: 100 })
  @IsOptional() @IsInt() @Min(0) @Max(100)
  priority?: number;

  @ApiPropertyOptional({ type: QuotaDto })
  @IsOptional() @ValidateNested() @Type(() => QuotaDto)
  quota?: QuotaDto;

  @ApiPropertyOptional(WEIGHT_DOC)
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @IsPositive() @Max(1000)
  weight?: number;
}

export class QueueUsageView {
  @ApiProperty() gpusHeld!: number;
  @ApiProperty() jobsQueued!: number;
  @ApiProperty() jobsRunning!: number;
}

export class QueueView {
  @ApiProperty() name!: string;
  @ApiProperty() priority!: number;
  @ApiProperty({ type: QuotaDto }) quota!: { gpus: number | null };
  @ApiProperty({ description: 'Fair-share weight within the priority band' }) weight!: number;
  @ApiProperty({ type: QueueUsageView }) usage!: QueueUsageView;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time' }) updatedAt!: string;
}

export class QueueList {
  @ApiProperty({ type: [QueueView] }) items!: QueueView[];
}
