import { TOPIC_PARTITIONS } from '@gantry/contracts';
import { createKafka, ensureTopics } from '@gantry/messaging';

/** Creates Gantry's topics (contract and internal) with their partition counts on KAFKA_BROKERS. */
async function main(): Promise<void> {
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const created = await ensureTopics(createKafka({ brokers, clientId: 'gantry-create-topics' }), TOPIC_PARTITIONS);
  console.log(created.length ? `created topics: ${created.join(', ')}` : 'topics present');
}

main().catch((e) => {
  console.error(`cannot create Kafka topics: ${(e as Error).message}`);
  process.exit(1);
});
