import 'reflect-metadata';
import { IsIn, IsInt, Max, Min } from 'class-validator';
import { TOPICS, TOPIC_CONFIGS, TOPIC_PARTITIONS, TopicName } from '@gantry/contracts';
import { applyKafkaAcls, createKafka, ensureTopics } from '@gantry/messaging';
import { ServiceEnv, loadConfig } from '@gantry/platform';

/** What this one-shot takes: where Kafka is, as whom (a principal that may create topics and ACLs), and how. */
class KafkaSetupEnv extends ServiceEnv {
  /** Replicas of each topic (3 in the production overlay). */
  @IsInt() @Min(1) @Max(16) KAFKA_REPLICATION_FACTOR: number = 1;
  /** Partitions of gantry.agent-commands.v1 when it is created: an agent reads the partitions of its own nodes (ADR 0015). */
  @IsInt() @Min(1) @Max(100_000) KAFKA_COMMAND_PARTITIONS: number = TOPIC_PARTITIONS[TOPICS.agentCommands];
  /** Write the ACLs of every Gantry role (off where the platform manages them, e.g. Strimzi KafkaUser resources). */
  @IsIn(['true', 'false']) KAFKA_APPLY_ACLS: 'true' | 'false' = 'true';
}

/**
 * Creates Gantry's topics (contract and internal) with their partition counts, replication and
 * configs, and the ACLs of every role (least privilege, contract 4.1). Existing topics and ACLs
 * are kept; running it again changes nothing. `npm start`, `npm test` and the deploy's migrate Job run it.
 */
async function main(): Promise<void> {
  const env = loadConfig(KafkaSetupEnv);
  const kafka = createKafka({ brokers: env.kafkaBrokers, clientId: 'gantry-prepare-kafka', security: env.kafkaSecurity });
  const specs = Object.fromEntries(
    (Object.keys(TOPIC_PARTITIONS) as TopicName[]).map((t) => [
      t,
      { partitions: t === TOPICS.agentCommands ? env.KAFKA_COMMAND_PARTITIONS : TOPIC_PARTITIONS[t], config: TOPIC_CONFIGS[t] },
    ]),
  );
  const created = await ensureTopics(kafka, specs, env.KAFKA_REPLICATION_FACTOR);
  console.log(created.length ? `created topics: ${created.join(', ')}` : 'topics present');
  if (env.KAFKA_APPLY_ACLS === 'true') console.log(`ACLs in place: ${await applyKafkaAcls(kafka)}`);
}

main().catch((e) => {
  console.error(`cannot prepare Kafka: ${(e as Error).message}`);
  process.exit(1);
});
