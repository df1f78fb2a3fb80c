import { Column, Entity, PrimaryColumn } from 'typeorm';

const bigintAsNumber = { to: (v: number) => v, from: (v: string | null) => (v === null ? null : Number(v)) };

/** One rank of one attempt: what it holds on its node until `releasedAt` (released exactly once). */
@Entity({ name: 'attempt_nodes' })
export class AttemptNodeEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' }) jobId!: string;
  @PrimaryColumn('int') attempt!: number;
  @PrimaryColumn('int') rank!: number;
  @Column({ name: 'node_id', type: 'text' }) nodeId!: string;
  /** The job's queue and owner, copied at placement for the fair-share read (ADR 0038). */
  @Column('text') queue!: string;
  @Column('text') owner!: string;
  @Column('int') gpus!: number;
  /** The GPU device indices this rank holds on its node (`gpus` of them; none for ranks placed before devices were assigned). */
  @Column({ name: 'gpu_indices', type: 'int', array: true }) gpuIndices!: number[];
  @Column({ name: 'cpu_cores', type: 'int' }) cpuCores!: number;
  @Column({ name: 'memory_mib', type: 'bigint', transformer: bigintAsNumber }) memoryMiB!: number;
  @Column('text') state!: string;
  @Column({ name: 'exit_code', type: 'int', nullable: true }) exitCode!: number | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'released_at', type: 'timestamptz', nullable: true }) releasedAt!: Date | null;
}
