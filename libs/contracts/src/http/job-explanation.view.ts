import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class AmountsView {
  @ApiProperty() gpus!: number;
  @ApiProperty() cpuCores!: number;
  @ApiProperty() memoryMiB!: number;
}

export class BlockerView {
  @ApiProperty({
    enum: [
      'DEPENDENCY',
      'BACKOFF',
      'QUOTA_EXCEEDED',
      'NO_MATCHING_NODES',
      'NODES_CORDONED',
      'NODES_UNHEALTHY',
      'INSUFFICIENT_CAPACITY',
      'BACKFILL_WINDOW',
      'FAIR_SHARE',
    ],
  })
  reason!: string;
  @ApiProperty() detail!: string;
  @ApiProperty({ type: AmountsView, description: 'What is missing (per node for capacity, in all for a quota); zeros where the blocker is not about amounts' })
  deficit!: AmountsView;
}

export class CounterfactualView {
  @ApiProperty({ enum: ['FEWER_GPUS', 'ANOTHER_MODEL', 'ANOTHER_QUEUE', 'UNCORDON_NODE'] }) change!: string;
  @ApiProperty() detail!: string;
}

export class QueuePositionView {
  @ApiProperty({ description: '1 is next in its queue' }) queue!: number;
  @ApiProperty({ description: '1 is next across every queue (higher bands first, then age)' }) overall!: number;
}

/** GET /v1/jobs/{id}/explain (contract §4.7, ADR 0024): why a queued job waits. */
export class JobExplanationView {
  @ApiPropertyOptional({ nullable: true, type: String, description: "The scheduler's last word on it" }) pendingReason!: string | null;
  @ApiProperty({ type: QueuePositionView }) position!: QueuePositionView;
  @ApiProperty({ type: [BlockerView], description: 'Every reason it is not running now, not just the first' }) blockers!: BlockerView[];
  @ApiProperty({ type: [CounterfactualView], description: 'Single changes that would let it start now' }) wouldStartWith!: CounterfactualView[];
  @ApiPropertyOptional({
    nullable: true,
    type: String,
    format: 'date-time',
    description:
      "From running attempts' maxRuntimeSeconds (a backfill-style simulation); null where what blocks it has no deadline, or no end lifts its blockers",
  })
  estimatedStartAt!: string | null;
}
