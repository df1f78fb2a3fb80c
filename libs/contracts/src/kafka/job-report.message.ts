import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { NODE_ID_PATTERN } from './heartbeat.message';

/** Job ids are UUIDs; anything else names no job. */
export const JOB_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const REPORTED_STATES = ['RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] as const;
export type ReportedState = (typeof REPORTED_STATES)[number];

/** gantry.job-reports.v1: what an agent saw happen to one attempt on its node; key = nodeId. */
export class JobReportMessage {
  @Matches(NODE_ID_PATTERN) nodeId!: string;
  @IsString() @Length(1, 64) jobId!: string;
  @IsInt() @Min(1) attempt!: number;
  @IsIn(REPORTED_STATES) state!: ReportedState;
  @IsOptional() @IsInt() @Min(-2147483648) @Max(2147483647) exitCode?: number;
  @IsOptional() @IsString() @Length(0, 1024) reason?: string;
  /** Epoch milliseconds. */
  @IsInt() @Min(0) at!: number;
}
