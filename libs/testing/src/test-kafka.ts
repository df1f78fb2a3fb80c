import { CommandSigner, KafkaConnection, KafkaSecurity, OutgoingMessage, SIGNATURE_HEADER, WakeUpSender, createKafka } from '@gantry/messaging';
import { testEnv } from './test-env';

/** A Kafka client on the test broker, as its admin (or as `role`): for tests that watch or write topics themselves. */
export function testKafka(clientId: string, role = 'admin'): KafkaConnection {
  return createKafka({ brokers: testEnv.kafkaBrokers, clientId, security: testEnv.kafkaSecurity(role) });
}

/** A client on the test broker with exactly these credentials (none: a stranger). */
export function kafkaAs(clientId: string, security: KafkaSecurity | undefined): KafkaConnection {
  return createKafka({ brokers: testEnv.kafkaBrokers, clientId, security });
}

/** An agent command as the control plane sends it: keyed by node, signed with `signingKeyPem` (PKCS#8 Ed25519), or unsigned when null. */
export function commandMessage(body: { nodeId: string }, signingKeyPem: string | null): OutgoingMessage {
  const value = JSON.stringify(body);
  return { key: body.nodeId, value, headers: signingKeyPem ? { [SIGNATURE_HEADER]: new CommandSigner(signingKeyPem).sign(value) } : {} };
}

/** A WakeUpSender on the test broker, as the services build theirs; `close` disconnects its producer. */
export async function testWakeUpSender(clientId: string): Promise<{ sender: WakeUpSender; close: () => Promise<void> }> {
  const connection = testKafka(clientId);
  const producer = await connection.connectProducer();
  const sender = new WakeUpSender(producer, { debug: () => undefined });
  return {
    sender,
    close: async () => {
      await sender.settled();
      await connection.disconnect();
    },
  };
}
