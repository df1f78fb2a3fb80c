import { generateKeyPairSync } from 'node:crypto';
import { JWK, calculateJwkThumbprint, createLocalJWKSet, jwtVerify } from 'jose';
import { AgentKafkaTokenSigner } from './agent-kafka-token-signer';

const pem = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) => key.export({ type: 'pkcs8', format: 'pem' }).toString();
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const NOW = 1_800_000_000_000;

describe('AgentKafkaTokenSigner', () => {
  it("signs what the broker's OAUTHBEARER validator checks: ES256 under the JWKS's key id, sub, iss, aud, iat and exp", async () => {
    const signer = new AgentKafkaTokenSigner(pem(ec.privateKey));
    // The JWKS as scripts/kafka/start.sh writes it.
    const jwk = { ...(ec.publicKey.export({ format: 'jwk' }) as JWK), alg: 'ES256', use: 'sig' };
    expect(signer.kid).toBe(await calculateJwkThumbprint(jwk, 'sha256'));
    const { token, expiresAt } = await signer.sign('gantry-node-gpu-1.g3', NOW, 900_000);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet({ keys: [{ ...jwk, kid: signer.kid }] }), {
      issuer: 'gantry',
      audience: 'gantry-kafka',
      currentDate: new Date(NOW + 1000),
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: signer.kid });
    expect(payload).toMatchObject({ sub: 'gantry-node-gpu-1.g3', iat: NOW / 1000, exp: (NOW + 900_000) / 1000 });
    expect(expiresAt).toBe(NOW + 900_000);
  });

  it.each([
    ['an Ed25519 key', generateKeyPairSync('ed25519').privateKey],
    ['a P-384 key', generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey],
  ])('refuses %s, naming the variable', (_n, key) => {
    expect(() => new AgentKafkaTokenSigner(pem(key))).toThrow(/GANTRY_AGENT_KAFKA_TOKEN_KEY/);
  });
});
