import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsInt, IsObject, IsOptional, Matches, Max, Min, ValidateNested } from 'class-validator';
import { NODE_ID_PATTERN } from '../kafka/field-schemas';
import { NodeInventoryDto } from './node-inventory.dto';

/**
 * How an agent reaches Kafka (ADR 0034): as its node's own principal, with SASL/OAUTHBEARER tokens
 * it asks the gateway for (POST /v1/nodes/{id}/kafka-token), proving its credential. Agents hold no
 * Kafka password.
 */
export class AgentKafkaView {
  @ApiProperty({ type: [String], example: ['kafka-0.kafka:9092'] }) brokers!: string[];
  @ApiProperty({
    nullable: true,
    type: String,
    enum: ['oauthbearer'],
    description: 'oauthbearer: tokens from POST /v1/nodes/{id}/kafka-token; null: this gateway issues no tokens (a broker without authentication)',
  })
  mechanism!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "The node's Kafka principal in this enrollment (the tokens' sub); null in a bulk answer (gantry-node-<id>.g<generation>)",
  })
  username!: string | null;
  @ApiProperty({ nullable: true, type: String, description: 'Always null: agents hold no Kafka password' }) password!: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'The consumer group the node reads its commands in, which only its principal may use; null in a bulk answer (gantry-node-<id>)',
  })
  groupId!: string | null;
}

/**
 * POST /v1/nodes/{id}/kafka-token. The node proves its credential in header `gantry-signature`:
 * `v1=` + lowercase hex of HMAC-SHA256(key = the credential's UTF-8 bytes, data =
 * "gantry-kafka-token/v1\n<node id>\n<at>"), each signature accepted once; nothing else authenticates it.
 */
export class KafkaTokenRequestDto {
  @ApiProperty({
    type: 'integer',
    format: 'int64',
    description: "When the node asks, epoch ms; refused further than GANTRY_CLOCK_SKEW_MS from the gateway's clock",
    example: 1796000000000,
  })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  at!: number;
}

export class AgentKafkaTokenView {
  @ApiProperty({ description: "A JWT (ES256) for SASL/OAUTHBEARER; its sub is the node's principal" }) token!: string;
  @ApiProperty({ format: 'date-time', description: 'When the broker stops accepting it: ask for the next one well before' }) expiresAt!: string;
  @ApiProperty({ description: "The node's Kafka principal in this enrollment" }) principal!: string;
  @ApiProperty({ description: 'The only consumer group this principal may use: where the node reads its commands' }) groupId!: string;
}

/** POST /v1/nodes/{id}/enrollment: everything one agent needs; the credential is shown once. */
export class NodeEnrollmentView {
  @ApiProperty() nodeId!: string;
  @ApiProperty({ description: 'Signs every heartbeat and report of the node (HMAC-SHA256, contract 4.1). Shown once; enrolling again rotates it.' })
  credential!: string;
  @ApiProperty({ type: AgentKafkaView }) kafka!: AgentKafkaView;
  @ApiProperty({ description: "The control plane's command-signing public key (PEM, SPKI, Ed25519)" }) commandPublicKey!: string;
}

export class NodeIdsDto {
  @ApiProperty({
    type: String,
    isArray: true,
    minItems: 1,
    maxItems: 1000,
    maxLength: 253,
    pattern: NODE_ID_PATTERN.source,
    description: 'Node ids to enroll (or enroll again, rotating their credentials)',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(1000)
  @Matches(NODE_ID_PATTERN, { each: true, message: 'each node id must be 1..253 letters, digits, ".", "_" or "-", starting with a letter or digit' })
  nodeIds!: string[];

  @ApiPropertyOptional({
    type: NodeInventoryDto,
    description:
      "Every one of these nodes' inventory, pinned (replacing any pinned before): placement never believes more. Omitted: each keeps its pinned one, or pins its first report. Nodes of different shapes are enrolled in one request per shape",
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => NodeInventoryDto)
  inventory?: NodeInventoryDto;
}

export class EnrolledNodeView {
  @ApiProperty() nodeId!: string;
  @ApiProperty() credential!: string;
}

/** POST /v1/nodes/enrollments: many nodes at once (a simulated fleet enrolls itself this way). */
export class NodeEnrollmentsView {
  @ApiProperty({ type: [EnrolledNodeView] }) items!: EnrolledNodeView[];
  @ApiProperty({ type: AgentKafkaView }) kafka!: AgentKafkaView;
  @ApiProperty() commandPublicKey!: string;
}

export class CommandKeyView {
  @ApiProperty({ description: "The control plane's command-signing public key (PEM, SPKI, Ed25519); agents carry out only what it signed" })
  publicKey!: string;
}
