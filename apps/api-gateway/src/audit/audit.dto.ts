import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

/** GET /v1/audit query; unknown parameters are rejected like unknown body fields. */
export class ListAuditQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
  @ApiPropertyOptional({ description: 'Opaque; from the previous page' }) @IsOptional() @IsString() @MaxLength(1024) cursor?: string;
}

export class AuditActorView {
  @ApiProperty({ example: 'admin' }) owner!: string;
  @ApiProperty({ enum: ['user', 'operator'] }) role!: string;
  @ApiProperty({ nullable: true, type: String, description: 'The token used; null for the admin token of GANTRY_ADMIN_TOKEN' }) tokenId!: string | null;
}

export class AuditEntryView {
  @ApiProperty() id!: number;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({ type: AuditActorView }) actor!: AuditActorView;
  @ApiProperty({ nullable: true, type: String, description: "The caller's network address as the gateway saw it" }) address!: string | null;
  @ApiProperty({ example: 'queues.update', description: 'What was done, named like the operation' }) action!: string;
  @ApiProperty({ example: 'research', description: 'What it was done to: a token id, queue name, node id or job id' }) target!: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'What changed, by action' }) details!: Record<string, unknown>;
}

export class AuditPage {
  @ApiProperty({ type: [AuditEntryView], description: 'Newest first' }) items!: AuditEntryView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}
