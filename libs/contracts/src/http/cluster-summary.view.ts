import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class NodeHealthCounts {
  @ApiProperty() HEALTHY!: number;
  @ApiProperty() DEGRADED!: number;
  @ApiProperty() UNHEALTHY!: number;
}

export class GpuModelCapacity {
  @ApiPropertyOptional({ nullable: true, type: String, description: 'null: nodes without GPUs' }) model!: string | null;
  @ApiProperty() nodes!: number;
  @ApiProperty() total!: number;
  @ApiProperty() allocated!: number;
  @ApiProperty({ description: 'Unallocated GPUs on uncordoned nodes' }) free!: number;
}

export class ClusterUtilisation {
  @ApiPropertyOptional({ nullable: true, type: Number, description: 'Mean over the GPUs of nodes heard within GANTRY_NODE_DEAD_MS, 0..1' }) gpu!: number | null;
  @ApiPropertyOptional({ nullable: true, type: Number, description: 'Mean over nodes heard within GANTRY_NODE_DEAD_MS, 0..1' }) cpu!: number | null;
  @ApiProperty({ description: 'Nodes the averages cover' }) nodes!: number;
}

/** GET /v1/cluster/summary. */
export class ClusterSummaryView {
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({ description: 'Registered nodes' }) nodes!: number;
  @ApiProperty({ type: NodeHealthCounts }) nodesByHealth!: NodeHealthCounts;
  @ApiProperty({ type: [GpuModelCapacity] }) gpus!: GpuModelCapacity[];
  @ApiProperty({ type: ClusterUtilisation }) utilisation!: ClusterUtilisation;
  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    description: 'Every job state, with zero counts',
  })
  jobsByState!: Record<string, number>;
}
