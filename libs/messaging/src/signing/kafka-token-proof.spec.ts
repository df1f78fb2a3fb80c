import { nodeSigningKey, signNodeMessage } from './node-signature';
import { kafkaTokenRequestSigned, signKafkaTokenRequest } from './kafka-token-proof';

const key = nodeSigningKey('credential-of-gpu-1');
const AT = 1_800_000_000_000;

describe('Kafka token requests', () => {
  it.each<[string, string, number, () => string, boolean]>([
    ['signed by the node for its id and time', 'gpu-1', AT, () => signKafkaTokenRequest('gpu-1', AT, key), true],
    ['for another node', 'gpu-2', AT, () => signKafkaTokenRequest('gpu-1', AT, key), false],
    ['with another time', 'gpu-1', AT + 1, () => signKafkaTokenRequest('gpu-1', AT, key), false],
    ["with another node's credential", 'gpu-1', AT, () => signKafkaTokenRequest('gpu-1', AT, nodeSigningKey('credential-of-gpu-2')), false],
    ['a signature of a beat value', 'gpu-1', AT, () => signNodeMessage(`{"nodeId":"gpu-1","sentAt":${AT}}`, key), false],
    ['in upper-case hex', 'gpu-1', AT, () => signKafkaTokenRequest('gpu-1', AT, key).toUpperCase(), false],
  ])('%s: %s', (_name, nodeId, at, signature, expected) => {
    expect(kafkaTokenRequestSigned(nodeId, at, signature(), key)).toBe(expected);
  });
});
