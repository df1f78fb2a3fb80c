import { KafkaConnection, createKafka } from '@gantry/messaging';
import { testEnv } from './test-env';

/** A Kafka client on the test broker, as its admin (or as `role`): for tests that watch or write topics themselves. */
export function testKafka(clientId: string, role = 'admin'): KafkaConnection {
  return createKafka({ brokers: testEnv.kafkaBrokers, clientId, security: testEnv.kafkaSecurity(role) });
}
