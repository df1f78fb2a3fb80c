import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsRFC3339, IsString, Matches, Max, MaxLength, Min } from 'class-validator';

export const OWNER_PATTERN = /^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$/;

export class CreateTokenDto {
  @ApiProperty({ description: 'Whose jobs the token acts for', example: 'team-a', maxLength: 64 })
  @Matches(OWNER_PATTERN, { message: 'owner must be 1..64 lowercase letters, digits, ".", "_" or "-"' })
  owner!: string;

  @ApiProperty({ enum: ['user', 'operator'] })
  @IsIn(['user', 'operator'])
  role!: 'user' | 'operator';

  @ApiPropertyOptional({
    format: 'date-time',
    maxLength: 64,
    description: 'RFC 3339; after it the token is refused (401). Must be in the future. Omitted: never expires',
  })
  @IsOptional()
  @IsRFC3339({ message: 'expiresAt must be an RFC 3339 date-time' })
  expiresAt?: string;

  @ApiPropertyOptional({ maxLength: 256, description: 'What the token is for; shown in listings' })
  @IsOptional()
  @IsString()
  @MaxLength(256)
  description?: string;
}

export class TokenInfoView {
  @ApiProperty() id!: string;
  @ApiProperty() owner!: string;
  @ApiProperty({ enum: ['user', 'operator'] }) role!: 'user' | 'operator';
  @ApiProperty({ nullable: true, type: String }) description!: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'null: never expires' }) expiresAt!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'null: not revoked' }) revokedAt!: string | null;
}

export class TokenView extends TokenInfoView {
  @ApiProperty({ description: 'The secret: shown once, stored only as a hash' }) token!: string;
}

export class TokenPage {
  @ApiProperty({ type: [TokenInfoView], description: 'Ordered by (createdAt, id); never the secrets' }) items!: TokenInfoView[];
  @ApiProperty({ nullable: true, type: String }) nextCursor!: string | null;
}

/** GET /v1/tokens query. */
export class ListTokensQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 }) @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(500) limit?: number;
  @ApiPropertyOptional({ description: 'Opaque; from the previous page' }) @IsOptional() @IsString() @MaxLength(1024) cursor?: string;
}
