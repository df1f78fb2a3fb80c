import { Type } from 'class-transformer';
import {
  IsArray, IsIn, IsInt, IsObject, IsOptional, IsString, Length, Matches, Min, ValidateIf, ValidateNested,
} from 'class-validator';
import { NODE_ID_PATTERN } from './heartbeat.message';

export class CommandResources {
  @IsInt() @Min(0) gpus!: number;
  @IsOptional() @IsString() gpuModel?: string | null;
  @IsInt() @Min(0) cpuCores!: number;
  @IsInt() @Min(0) memoryMiB!: number;
}

export class GangInfo {
  @IsInt() @Min(1) size!: number;
  @IsInt() @Min(0) rank!: number;
  @IsArray() @IsString({ each: true }) nodeIds!: string[];
}

/** gantry.agent-commands.v1: RUN or KILL one attempt on one node; key = nodeId. */
export class AgentCommandMessage {
  @IsIn(['RUN', 'KILL']) type!: 'RUN' | 'KILL';
  @Matches(NODE_ID_PATTERN) nodeId!: string;
  @IsString() @Length(1, 64) jobId!: string;
  @IsInt() @Min(1) attempt!: number;
  /**
   * When the control plane built the command (epoch ms, its clock). Signed with the rest: an agent
   * refuses a command older than GANTRY_COMMAND_MAX_AGE_MS, so a recorded command cannot be replayed
   * to it later.
   */
  @IsInt() @Min(0) issuedAt!: number;

  @ValidateIf((c: AgentCommandMessage) => c.type === 'RUN') @IsString() image?: string;
  @ValidateIf((c: AgentCommandMessage) => c.type === 'RUN') @IsArray() @IsString({ each: true }) command?: string[];
  @ValidateIf((c: AgentCommandMessage) => c.type === 'RUN') @IsObject() env?: Record<string, string>;
  @ValidateIf((c: AgentCommandMessage) => c.type === 'RUN') @ValidateNested() @Type(() => CommandResources) resources?: CommandResources;
  @ValidateIf((c: AgentCommandMessage) => c.type === 'RUN') @ValidateNested() @Type(() => GangInfo) gang?: GangInfo;

  @ValidateIf((c: AgentCommandMessage) => c.type === 'KILL') @IsString() reason?: string;
}

export type RunCommand = Required<Pick<AgentCommandMessage, 'nodeId' | 'jobId' | 'attempt' | 'issuedAt' | 'image' | 'command' | 'env' | 'resources' | 'gang'>> & { type: 'RUN' };
export type KillCommand = Required<Pick<AgentCommandMessage, 'nodeId' | 'jobId' | 'attempt' | 'issuedAt' | 'reason'>> & { type: 'KILL' };
