import { KeyObject, createHash, createPublicKey } from 'node:crypto';

/** One key of the JWKS the brokers validate agents' Kafka tokens with (ADR 0034). */
export interface AgentTokenJwk {
  kty: string;
  crv: string;
  x: string;
  y: string;
  /** The public key's RFC 7638 thumbprint (SHA-256, base64url): the `kid` of the tokens it signs. */
  kid: string;
  use: 'sig';
  alg: 'ES256';
}

/**
 * The public JWK of an agent token key (an EC P-256 private or public key): what goes in the
 * brokers' JWKS file. scripts/kafka/start.sh writes the same for its own key; the e2e tests show the two agree.
 */
export function agentTokenJwk(key: KeyObject): AgentTokenJwk {
  const { crv, kty, x, y } = createPublicKey(key).export({ format: 'jwk' }) as { crv: string; kty: string; x: string; y: string };
  const kid = createHash('sha256').update(JSON.stringify({ crv, kty, x, y })).digest('base64url');
  return { kty, crv, x, y, kid, use: 'sig', alg: 'ES256' };
}
