import { TOPICS, TOPIC_PARTITIONS } from '@gantry/contracts';
import {
  KafkaConnection,
  MessageProducer,
  NODE_ID_HEADER,
  OutgoingMessage,
  SIGNATURE_HEADER,
  createKafka,
  nodeSigningKey,
  partitionForKey,
  signKafkaTokenRequest,
  signNodeMessage,
} from '@gantry/messaging';
import { testEnv } from './test-env';

/**
 * An agent driven by hand, for tests that need to send exactly what they mean: it enrolls nodes
 * through the gateway (operator token), connects to Kafka as the simulated fleet's principal (which
 * may write beats and reports), signs what it sends as the node it names, or not, or as another
 * node, as the test asks, and asks for nodes' Kafka tokens the same way.
 */
export class HandAgent {
  private kafka: KafkaConnection | null = null;
  private producer: MessageProducer | null = null;
  readonly credentials = new Map<string, string>();

  constructor(
    private readonly gatewayUrl: string,
    private readonly adminToken: string,
  ) {}

  /** Enrolls (or enrolls again, rotating) these nodes and keeps their credentials. */
  async enroll(...nodeIds: string[]): Promise<void> {
    await this.enrollWith(null, ...nodeIds);
  }

  /** The same, declaring these nodes' inventory (contract §5.2): placement never believes more of them. */
  async enrollWith(inventory: object | null, ...nodeIds: string[]): Promise<void> {
    const res = await fetch(`${this.gatewayUrl}/v1/nodes/enrollments`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ nodeIds, ...(inventory ? { inventory } : {}) }),
    });
    if (res.status !== 201) throw new Error(`enrollment failed: ${res.status} ${await res.text()}`);
    for (const i of ((await res.json()) as { items: Array<{ nodeId: string; credential: string }> }).items) this.credentials.set(i.nodeId, i.credential);
  }

  /** A message from `nodeId` (the key), signed with `signAs`'s credential (default: its own), or unsigned when signAs is null. */
  message(nodeId: string, body: object | string, signAs: string | null = nodeId): OutgoingMessage {
    const value = typeof body === 'string' ? body : JSON.stringify(body);
    if (signAs === null) return { key: nodeId, value };
    const credential = this.credentials.get(signAs);
    if (!credential) throw new Error(`node ${signAs} is not enrolled by this hand agent`);
    return { key: nodeId, value, headers: { [NODE_ID_HEADER]: signAs, [SIGNATURE_HEADER]: signNodeMessage(value, nodeSigningKey(credential)) } };
  }

  /**
   * Asks the gateway for `nodeId`'s Kafka token (ADR 0034), proving `signAs`'s credential (default:
   * its own) over `at` (default: now), or sending `signature` as given: the gateway's answer as it came.
   */
  async requestKafkaToken(
    nodeId: string,
    o: { signAs?: string; at?: number; signature?: string } = {},
  ): Promise<{ status: number; body: Record<string, unknown>; signature: string }> {
    const at = o.at ?? Date.now();
    let signature = o.signature;
    if (signature === undefined) {
      const credential = this.credentials.get(o.signAs ?? nodeId);
      if (!credential) throw new Error(`node ${o.signAs ?? nodeId} is not enrolled by this hand agent`);
      signature = signKafkaTokenRequest(nodeId, at, nodeSigningKey(credential));
    }
    const res = await fetch(`${this.gatewayUrl}/v1/nodes/${encodeURIComponent(nodeId)}/kafka-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signature },
      body: JSON.stringify({ at }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, signature };
  }

  async send(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (!this.producer) {
      this.kafka = createKafka({ brokers: testEnv.kafkaBrokers, clientId: 'hand-agent', security: testEnv.kafkaSecurity('fleet') });
      this.producer = await this.kafka.connectProducer();
    }
    await this.producer.send(topic, messages);
  }

  /** A node id `${prefix}-<n>` whose beats land on the same heartbeat partition as `key`'s. */
  static nodeIdBesideKey(prefix: string, key: string): string {
    const partitions = TOPIC_PARTITIONS[TOPICS.heartbeats];
    const target = partitionForKey(key, partitions);
    for (let n = 0; ; n++) if (partitionForKey(`${prefix}-${n}`, partitions) === target) return `${prefix}-${n}`;
  }

  sendBeats(messages: OutgoingMessage[]): Promise<void> {
    return this.send(TOPICS.heartbeats, messages);
  }

  async close(): Promise<void> {
    await this.kafka?.disconnect();
  }
}
