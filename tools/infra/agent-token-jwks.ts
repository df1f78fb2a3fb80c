import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { agentTokenJwk } from '@gantry/messaging';

/**
 * Prints the JWKS that brokers validate real agents' Kafka tokens with (ADR 0034): the public half
 * of each agent token key given, as PEM files (or `-` for stdin). Give the old key and the new one
 * during a rotation, so that tokens of both verify until the old ones have expired.
 *   node dist/tools/infra/agent-token-jwks.js agent-token-key.pem > agent-token-jwks.json
 */
function main(): void {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    console.error('usage: agent-token-jwks <key.pem|-> [<key.pem> ...]   (EC P-256 keys, PEM)');
    process.exit(2);
  }
  const keys = files.map((f) => {
    const key = createPrivateKey(readFileSync(f === '-' ? 0 : f, 'utf8'));
    if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error(`${f}: not an EC P-256 key`);
    return agentTokenJwk(key);
  });
  process.stdout.write(`${JSON.stringify({ keys })}\n`);
}

try {
  main();
} catch (e) {
  console.error(`cannot write the JWKS: ${(e as Error).message}`);
  process.exit(1);
}
