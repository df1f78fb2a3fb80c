import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsObject, IsOptional, Matches, ValidateNested } from 'class-validator';
import { NODE_ID_PATTERN } from '../kafka/field-schemas';
import { NodeInventoryDto } from './node-inventory.dto';

/** How an agent reaches Kafka: the agents' principal (every agent shares it; nodes are told apart by their signatures). */
export class AgentKafkaView {
  @ApiProperty({ type: [String], example: ['kafka-0.kafka:9092'] }) brokers!: string[];
  @ApiProperty({ nullable: true, type: String, enum: ['scram-sha-512', 'scram-sha-256', 'plain'], description: 'null: the brokers take no SASL' })
  mechanism!: string | null;
  @ApiProperty({ nullable: true, type: String }) username!: string | null;
  @ApiProperty({ nullable: true, type: String }) password!: string | null;
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
  @ApiProperty({ type: String, isArray: true, minItems: 1, maxItems: 1000, maxLength: 253, pattern: NODE_ID_PATTERN.source, description: 'Node ids to enroll (or enroll again, rotating their credentials)' })
  @IsArray() @ArrayMinSize(1) @ArrayMaxSize(1000)
  @Matches(NODE_ID_PATTERN, { each: true, message: 'each node id must be 1..253 letters, digits, ".", "_" or "-", starting with a letter or digit' })
  nodeIds!: string[];

  @ApiPropertyOptional({ type: NodeInventoryDto, description: "Every one of these nodes' inventory, pinned (replacing any pinned before): placement never believes more. Omitted: each keeps its pinned one, or pins its first report. Nodes of different shapes are enrolled in one request per shape" })
  @IsOptional() @IsObject() @ValidateNested() @Type(() => NodeInventoryDto)
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
