import { KeyObject } from 'node:crypto';
import { kafkaTokenProofData } from '@gantry/contracts';
import { nodeSignatureMatches, signNodeMessage } from './node-signature';

/**
 * How a node proves its credential when it asks for a Kafka token (ADR 0034): the same HMAC as its
 * beats' signatures (`v1=` + hex), over kafkaTokenProofData, which no beat or report value can equal.
 */
export function signKafkaTokenRequest(nodeId: string, at: number, key: KeyObject): string {
  return signNodeMessage(kafkaTokenProofData(nodeId, at), key);
}

export function kafkaTokenRequestSigned(nodeId: string, at: number, signature: string, key: KeyObject): boolean {
  return nodeSignatureMatches(Buffer.from(kafkaTokenProofData(nodeId, at), 'utf8'), signature, key);
}
