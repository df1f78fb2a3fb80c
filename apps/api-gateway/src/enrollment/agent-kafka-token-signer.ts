import { KeyObject, createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import { AGENT_TOKEN_AUDIENCE, AGENT_TOKEN_ISSUER } from '@gantry/contracts';
import { agentTokenJwk } from '@gantry/messaging';
import { ConfigError } from '@gantry/platform';

/**
 * Signs real agents' Kafka tokens (ADR 0034): JWTs (ES256) the brokers' OAUTHBEARER validator
 * takes against the key's public half, a JWKS file (scripts/kafka/start.sh writes both). `kid` is
 * the public key's RFC 7638 thumbprint, so a broker holding several keys (a rotation) picks this one.
 */
export class AgentKafkaTokenSigner {
  private readonly key: KeyObject;
  readonly kid: string;

  constructor(privateKeyPem: string) {
    this.key = createPrivateKey(privateKeyPem);
    if (this.key.asymmetricKeyType !== 'ec' || this.key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new ConfigError([
        `GANTRY_AGENT_KAFKA_TOKEN_KEY must be an EC P-256 key (ES256), got ${this.key.asymmetricKeyType} ${this.key.asymmetricKeyDetails?.namedCurve ?? ''}`.trim(),
      ]);
    }
    this.kid = agentTokenJwk(this.key).kid;
  }

  /** A token for `principal`, valid from `now` for `ttlMs` (whole seconds, as JWTs count). */
  async sign(principal: string, now: number, ttlMs: number): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(now / 1000);
    const exp = Math.floor((now + ttlMs) / 1000);
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: this.kid, typ: 'JWT' })
      .setSubject(principal)
      .setIssuer(AGENT_TOKEN_ISSUER)
      .setAudience(AGENT_TOKEN_AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: exp * 1000 };
  }
}
