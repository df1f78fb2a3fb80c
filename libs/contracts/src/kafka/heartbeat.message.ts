import { Type } from 'class-transformer';
import {
  IsArray, IsBoolean, IsInt, IsNumber, IsString, Length, Max, Min, ValidateNested, ArrayMaxSize, Matches,
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

/** gantry.heartbeats.v1: one per node every GANTRY_HEARTBEAT_MS; key = nodeId. */
export class HeartbeatMessage {
  @Matches(NODE_ID_PATTERN) nodeId!: string;
  @IsString() @Length(1, 128) bootId!: string;
  @IsInt() @Min(0) seq!: number;
  /** Epoch milliseconds. */
  @IsInt() @Min(0) sentAt!: number;
  @IsString() @Length(1, 64) zone!: string;
  @IsString() @Length(1, 64) rack!: string;
  @IsArray() @ArrayMaxSize(64) @ValidateNested({ each: true }) @Type(() => GpuTelemetry) gpus!: GpuTelemetry[];
  @ValidateNested() @Type(() => CpuTelemetry) cpu!: CpuTelemetry;
  @ValidateNested() @Type(() => MemoryTelemetry) memory!: MemoryTelemetry;
  /** The agent's whole truth: every attempt it is executing now. */
  @IsArray() @ArrayMaxSize(1024) @ValidateNested({ each: true }) @Type(() => RunningAttempt) running!: RunningAttempt[];
}
