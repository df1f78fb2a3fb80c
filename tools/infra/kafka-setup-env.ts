import 'reflect-metadata';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { TOPICS, TOPIC_PARTITIONS } from '@gantry/contracts';
import { ServiceEnv } from '@gantry/platform';

/** What prepare-kafka takes: where Kafka is, as whom (a principal that may create topics and ACLs), and how. */
export class KafkaSetupEnv extends ServiceEnv {
  /** Replicas of each topic (3 in the production overlay). */
  @IsInt() @Min(1) @Max(16) KAFKA_REPLICATION_FACTOR: number = 1;
  /** Partitions of gantry.agent-commands.v1 when it is created: an agent reads the partitions of its own nodes (ADR 0015). */
  @IsInt() @Min(1) @Max(100_000) KAFKA_COMMAND_PARTITIONS: number = TOPIC_PARTITIONS[TOPICS.agentCommands];
  /** Write the ACLs of every Gantry role (off where the platform manages them, e.g. Strimzi KafkaUser resources). */
  @IsIn(['true', 'false']) KAFKA_APPLY_ACLS: 'true' | 'false' = 'true';
}
