import { ApiProperty } from '@nestjs/swagger';

/** One rack of the heatmap: its nodes are the next `nodes` entries of the heatmap's per-node arrays. */
export class HeatmapRackView {
  @ApiProperty() zone!: string;
  @ApiProperty() rack!: string;
  @ApiProperty({ minimum: 0, description: "How many of the per-node entries, after the previous racks' ones, are this rack's" }) nodes!: number;
}

/**
 * GET /v1/cluster/heatmap: every registered node in one compact, columnar answer (about 25 bytes a
 * node: 1.25 MB for 50,000), ordered by zone, rack and id. Entry i of each per-node array is the same node.
 */
export class ClusterHeatmapView {
  @ApiProperty({ format: 'date-time', description: 'When the live part was read; topology and allocations may be up to a second older' }) at!: string;
  @ApiProperty({ type: [HeatmapRackView], description: 'Racks in zone, rack order' }) racks!: HeatmapRackView[];
  @ApiProperty({ type: [String], description: 'Node ids, rack by rack, in id order within a rack' }) nodeIds!: string[];
  @ApiProperty({ pattern: '^[HDU]*$', description: 'One character per node: H HEALTHY, D DEGRADED, U UNHEALTHY (as in the node resource)' }) health!: string;
  @ApiProperty({ type: [Number], description: 'Indices (into nodeIds) of the cordoned nodes' }) cordoned!: number[];
  @ApiProperty({ type: [Number], description: 'Healthy GPUs per node' }) gpusTotal!: number[];
  @ApiProperty({ type: [Number], description: 'GPUs held by placed work, per node' }) gpusAllocated!: number[];
  @ApiProperty({
    type: [Number],
    description: "Mean utilisation of the node's GPUs from its latest telemetry, percent 0..100; -1 when unknown (no telemetry yet, or no GPUs)",
  })
  gpuUtil!: number[];
  @ApiProperty({ type: [Number], description: 'CPU utilisation from the latest telemetry, percent 0..100; -1 when unknown' }) cpuUtil!: number[];
}
