import 'reflect-metadata';
import { TOPICS, TOPIC_CONFIGS, TOPIC_PARTITIONS, TopicName } from '@gantry/contracts';
import { applyKafkaAcls, createKafka, ensureTopics } from '@gantry/messaging';
import { loadConfig } from '@gantry/platform';
import { KafkaSetupEnv } from './kafka-setup-env';

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
