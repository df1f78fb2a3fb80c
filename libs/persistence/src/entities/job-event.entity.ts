import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Append-only: seq 1..n per job without gaps, written in the transaction of the change it records. */
@Entity({ name: 'job_events' })
export class JobEventEntity {
  @PrimaryColumn({ name: 'job_id', type: 'uuid' }) jobId!: string;
  @PrimaryColumn('int') seq!: number;
  @Column('text') type!: string;
  @Column('timestamptz') at!: Date;
  @Column({ name: 'from_state', type: 'text', nullable: true }) fromState!: string | null;
  @Column({ name: 'to_state', type: 'text', nullable: true }) toState!: string | null;
  @Column({ type: 'int', nullable: true }) attempt!: number | null;
  @Column({ name: 'node_ids', type: 'text', array: true, nullable: true }) nodeIds!: string[] | null;
  @Column({ type: 'text', nullable: true }) reason!: string | null;
}
