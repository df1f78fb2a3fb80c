import { ApiProperty } from '@nestjs/swagger';

/** GET /v1/whoami: who the presented token says the caller is (as `kubectl auth whoami` does). */
export class WhoamiView {
  @ApiProperty({ description: "The owner the token acts as: its jobs are this owner's" }) owner!: string;
  @ApiProperty({ enum: ['user', 'operator'] }) role!: 'user' | 'operator';
}
