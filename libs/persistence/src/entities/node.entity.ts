import { Column, Entity, PrimaryColumn } from 'typeorm';

const bigintAsNumber = { to: (v: number) => v, from: (v: string | null) => (v === null ? null : Number(v)) };

/** What a node last reported of its hardware (nodes.reported); the columns placement reads hold what is believed of it (ADR 0035). */
export interface ReportedHardwareRecord {
  gpuModel: string | null;
  gpuIndices: number[];
  cpuCores: number;
  memoryMiB: number;
  address: string | null;
}

/**
 * Durable topology (written when it changes) and allocations (written by placement, with CAS on
 * `version`). Capacity and address are what is believed: the lesser of the pinned inventory and the
 * node's report (ADR 0035); `reported` keeps the report itself.
 */
@Entity({ name: 'nodes' })
export class NodeEntity {
  @PrimaryColumn('text') id!: string;
  @Column('text') zone!: string;
  @Column('text') rack!: string;
  @Column({ name: 'gpu_model', type: 'text', nullable: true }) gpuModel!: string | null;
  @Column({ name: 'gpus_total', type: 'int' }) gpusTotal!: number;
  @Column({ name: 'cpu_cores', type: 'int' }) cpuCores!: number;
  @Column({ name: 'memory_mib', type: 'bigint', transformer: bigintAsNumber }) memoryMiB!: number;
  /** Device indices of the healthy GPUs of gpuModel (gpusTotal of them). */
  @Column({ name: 'gpu_indices', type: 'int', array: true }) gpuIndices!: number[];
  /** Device indices held by unreleased ranks; never one twice (nodes_gpus_held_distinct). */
  @Column({ name: 'gpus_held', type: 'int', array: true }) gpusHeld!: number[];
  /** Where the node listens (heartbeats' address); null when it never said. */
  @Column({ type: 'text', nullable: true }) address!: string | null;
  /** The port on address where the node's agent serves attempt logs (heartbeats' logsPort, ADR 0021); null when it never said. */
  @Column({ name: 'logs_port', type: 'int', nullable: true }) logsPort!: number | null;
  /** What the node last reported (null for a row written before ADR 0035's migration ran). */
  @Column({ type: 'jsonb', nullable: true }) reported!: ReportedHardwareRecord | null;
  @Column({ name: 'gpus_allocated', type: 'int' }) gpusAllocated!: number;
  @Column({ name: 'cpu_allocated', type: 'int' }) cpuAllocated!: number;
  @Column({ name: 'memory_allocated', type: 'bigint', transformer: bigintAsNumber }) memoryAllocated!: number;
  @Column('boolean') cordoned!: boolean;
  /** Why it is cordoned: OPERATOR, DRAIN or START_FAILURES; null when it is not. */
  @Column({ name: 'cordon_reason', type: 'text', nullable: true }) cordonReason!: string | null;
  /** Ranks in a row that timed out starting here (reset by a start, and by an uncordon). */
  @Column({ name: 'start_failures', type: 'int' }) startFailures!: number;
  /** While a drain is pending (ADR 0027): when the reconciler ends what still runs here; null otherwise. */
  @Column({ name: 'drain_deadline', type: 'timestamptz', nullable: true }) drainDeadline!: Date | null;
  @Column({ type: 'bigint', transformer: bigintAsNumber }) version!: number;
  @Column({ name: 'first_seen_at', type: 'timestamptz' }) firstSeenAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}
