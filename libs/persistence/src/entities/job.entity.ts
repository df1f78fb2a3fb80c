import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JobState } from '@gantry/domain';

const bigintAsNumber = { to: (v: number) => v, from: (v: string | null) => (v === null ? null : Number(v)) };

@Entity({ name: 'jobs' })
export class JobEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column('text') owner!: string;
  @Column('text') queue!: string;
  @Column('text') name!: string;
  @Column('text') image!: string;
  @Column('jsonb') command!: string[];
  @Column('jsonb') env!: Record<string, string>;
  @Column('jsonb') labels!: Record<string, string>;
  @Column('int') gpus!: number;
  @Column({ name: 'gpu_model', type: 'text', nullable: true }) gpuModel!: string | null;
  @Column({ name: 'cpu_cores', type: 'int' }) cpuCores!: number;
  @Column({ name: 'memory_mib', type: 'bigint', transformer: bigintAsNumber }) memoryMiB!: number;
  @Column('int') nodes!: number;
  @Column({ name: 'max_retries', type: 'int' }) maxRetries!: number;
  @Column('text') state!: JobState;
  @Column({ name: 'cancel_requested', type: 'boolean' }) cancelRequested!: boolean;
  @Column('int') attempt!: number;
  @Column({ name: 'node_ids', type: 'text', array: true }) nodeIds!: string[];
  /** The current attempt's GPU devices, rank by rank: rank i holds entries i*gpus .. (i+1)*gpus - 1. */
  @Column({ name: 'gpu_indices', type: 'int', array: true }) gpuIndices!: number[];
  /** Rank 0's node address when the current attempt was placed (null: the node never said). */
  @Column({ name: 'master_addr', type: 'text', nullable: true }) masterAddr!: string | null;
  /** Longest an attempt may run, seconds; null: no limit. */
  @Column({ name: 'max_runtime_seconds', type: 'int', nullable: true }) maxRuntimeSeconds!: number | null;
  /** Retry policy (ADR 0022): the first backoff ceiling and the largest, seconds; exit codes retried. */
  @Column({ name: 'backoff_seconds', type: 'int' }) backoffSeconds!: number;
  @Column({ name: 'max_backoff_seconds', type: 'int' }) maxBackoffSeconds!: number;
  @Column({ name: 'retry_on_exit_codes', type: 'int', array: true }) retryOnExitCodes!: number[];
  /** Not placed before this (a retry's backoff); null: no wait. */
  @Column({ name: 'not_before', type: 'timestamptz', nullable: true }) notBefore!: Date | null;
  /** Dependencies not met yet (ADR 0023); the scheduler reads only jobs with none. */
  @Column({ name: 'deps_pending', type: 'int' }) depsPending!: number;
  /** Attempts ended by a drain: they used no retry. */
  @Column({ name: 'retries_forgiven', type: 'int' }) retriesForgiven!: number;
  /** An array's parent (ADR 0025): how many children, and how many may be placed at once (null: no cap). */
  @Column({ name: 'array_size', type: 'int', nullable: true }) arraySize!: number | null;
  @Column({ name: 'array_parallelism', type: 'int', nullable: true }) arrayParallelism!: number | null;
  /** An array's child: its parent and its index (GANTRY_ARRAY_INDEX); it carries the parent's parallelism too. */
  @Column({ name: 'array_of', type: 'uuid', nullable: true }) arrayOf!: string | null;
  @Column({ name: 'array_index', type: 'int', nullable: true }) arrayIndex!: number | null;
  /** The attempt told to stop for a preemptor and not yet stopped (ADR 0026); null: none. */
  @Column({ name: 'preempted_attempt', type: 'int', nullable: true }) preemptedAttempt!: number | null;
  /** The job that attempt stops for. */
  @Column({ name: 'preempted_for', type: 'uuid', nullable: true }) preemptedFor!: string | null;
  /** When it was last told to stop for a preemptor (the cooldown counts from here). */
  @Column({ name: 'last_preempted_at', type: 'timestamptz', nullable: true }) lastPreemptedAt!: Date | null;
  /** Nodes where an attempt of the job timed out starting (START_TIMEOUT): placement avoids them while others fit (ADR 0035). */
  @Column({ name: 'start_failed_on', type: 'text', array: true }) startFailedOn!: string[];
  @Column({ name: 'pending_reason', type: 'text', nullable: true }) pendingReason!: string | null;
  @Column({ name: 'exit_code', type: 'int', nullable: true }) exitCode!: number | null;
  @Column({ type: 'text', nullable: true }) reason!: string | null;
  /** Compare-and-set version: every state change bumps it. */
  @Column({ type: 'bigint', transformer: bigintAsNumber }) version!: number;
  @Column({ name: 'last_event_seq', type: 'int' }) lastEventSeq!: number;
  @Column({ name: 'trace_parent', type: 'text', nullable: true }) traceParent!: string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
  @Column({ name: 'started_at', type: 'timestamptz', nullable: true }) startedAt!: Date | null;
  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true }) finishedAt!: Date | null;
}
