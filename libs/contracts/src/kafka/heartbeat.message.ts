import { Type } from 'class-transformer';
import {
  IsArray, IsBoolean, IsDefined, IsInt, IsNumber, IsString, Length, Max, Min, ValidateIf, ValidateNested, ArrayMaxSize, Matches,
} from 'class-validator';

export const NODE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

export class GpuTelemetry {
  @IsInt() @Min(0) index!: number;
  @IsString() @Length(1, 64) model!: string;
  @IsInt() @Min(0) memoryMiB!: number;
  @IsInt() @Min(0) memoryUsedMiB!: number;
  @IsNumber() @Min(0) @Max(1) utilization!: number;
  @IsBoolean() healthy!: boolean;
}

export class CpuTelemetry {
  @IsInt() @Min(0) @Max(65536) cores!: number;
  @IsNumber() @Min(0) @Max(1) utilization!: number;
}

export class MemoryTelemetry {
  @IsInt() @Min(0) @Max(2 ** 40) totalMiB!: number;
  @IsInt() @Min(0) usedMiB!: number;
}

export class RunningAttempt {
  @IsString() @Length(1, 64) jobId!: string;
  @IsInt() @Min(1) attempt!: number;
}

/** Telemetry is all three of gpus, cpu and memory, or none of them (a liveness beat). */
const carriesTelemetry = (b: HeartbeatMessage) => b.gpus !== undefined || b.cpu !== undefined || b.memory !== undefined;

/**
 * gantry.heartbeats.v1: one per node every GANTRY_HEARTBEAT_MS; key = nodeId.
 * The telemetry (gpus, cpu, memory) may be left out of a beat, all three together: the control plane
 * keeps the last telemetry it received (ADR 0010). Liveness and `running` are in every beat.
 */
export class HeartbeatMessage {
  @Matches(NODE_ID_PATTERN) nodeId!: string;
  @IsString() @Length(1, 128) bootId!: string;
  @IsInt() @Min(0) seq!: number;
  /** Epoch milliseconds. */
  @IsInt() @Min(0) sentAt!: number;
  @IsString() @Length(1, 64) zone!: string;
  @IsString() @Length(1, 64) rack!: string;
  @ValidateIf(carriesTelemetry) @IsArray() @ArrayMaxSize(64) @ValidateNested({ each: true }) @Type(() => GpuTelemetry) gpus?: GpuTelemetry[];
  @ValidateIf(carriesTelemetry) @IsDefined() @ValidateNested() @Type(() => CpuTelemetry) cpu?: CpuTelemetry;
  @ValidateIf(carriesTelemetry) @IsDefined() @ValidateNested() @Type(() => MemoryTelemetry) memory?: MemoryTelemetry;
  /** The agent's whole truth: every attempt it is executing now. */
  @IsArray() @ArrayMaxSize(1024) @ValidateNested({ each: true }) @Type(() => RunningAttempt) running!: RunningAttempt[];
}

/** A beat that carries telemetry (all three fields); a liveness beat carries none. */
export type TelemetryBeat = HeartbeatMessage & Required<Pick<HeartbeatMessage, 'gpus' | 'cpu' | 'memory'>>;

export function hasTelemetry(b: HeartbeatMessage): b is TelemetryBeat {
  return b.gpus !== undefined && b.cpu !== undefined && b.memory !== undefined;
}
