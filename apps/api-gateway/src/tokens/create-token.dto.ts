import { ApiProperty } from '@nestjs/swagger';
import { IsIn, Matches } from 'class-validator';

export class CreateTokenDto {
  @ApiProperty({ description: 'Whose jobs the token acts for', example: 'team-a', maxLength: 64 })
  @Matches(/^[a-z0-9]([a-z0-9._-]{0,62}[a-z0-9])?$/, { message: 'owner must be 1..64 lowercase letters, digits, ".", "_" or "-"' })
  owner!: string;

  @ApiProperty({ enum: ['user', 'operator'] })
  @IsIn(['user', 'operator'])
  role!: 'user' | 'operator';
}

export class TokenView {
  @ApiProperty() id!: string;
  @ApiProperty() owner!: string;
  @ApiProperty({ enum: ['user', 'operator'] }) role!: 'user' | 'operator';
  @ApiProperty({ description: 'The secret: shown once, stored only as a hash' }) token!: string;
}
