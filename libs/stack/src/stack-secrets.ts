import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The control plane's own secrets: the command-signing key pair and the secret node credentials
 * derive from (contract 4.1), and the gateway's cursor-signing key (contract 5.3), each made on its own.
 */
export interface StackSecrets {
  commandSigningKey: string;
  commandPublicKey: string;
  nodeCredentialSecret: string;
  cursorSecret: string;
}

export function generateStackSecrets(): StackSecrets {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    commandSigningKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    commandPublicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    nodeCredentialSecret: randomBytes(32).toString('base64url'),
    cursorSecret: randomBytes(32).toString('base64url'),
  };
}

/**
 * Secrets kept in `dir` (mode 0600) so that a restarted `npm start` keeps them: agents configured
 * with the command key, nodes enrolled before and cursors handed out stay valid. Made on first
 * use; a secret the file lacks (one added since it was written) is made and added to it.
 */
export function persistentStackSecrets(dir: string): StackSecrets {
  const file = join(dir, 'control-plane-secrets.json');
  const kept = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<StackSecrets>) : {};
  const s: StackSecrets = { ...generateStackSecrets(), ...kept };
  if (Object.keys(kept).length === Object.keys(s).length) return s;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, JSON.stringify(s, null, 2), { mode: 0o600 });
  return s;
}

/**
 * Each secret from the environment where it is set (GANTRY_COMMAND_SIGNING_KEY with
 * GANTRY_COMMAND_PUBLIC_KEY, a pair; GANTRY_NODE_CREDENTIAL_SECRET; GANTRY_CURSOR_SECRET), the
 * rest from `fallback` (asked only when one is missing).
 */
export function stackSecretsFromEnv(fallback: () => StackSecrets): StackSecrets {
  const e = process.env;
  const pair =
    e.GANTRY_COMMAND_SIGNING_KEY && e.GANTRY_COMMAND_PUBLIC_KEY
      ? { commandSigningKey: e.GANTRY_COMMAND_SIGNING_KEY, commandPublicKey: e.GANTRY_COMMAND_PUBLIC_KEY }
      : null;
  const given: Partial<StackSecrets> = {
    ...pair,
    ...(e.GANTRY_NODE_CREDENTIAL_SECRET ? { nodeCredentialSecret: e.GANTRY_NODE_CREDENTIAL_SECRET } : {}),
    ...(e.GANTRY_CURSOR_SECRET ? { cursorSecret: e.GANTRY_CURSOR_SECRET } : {}),
  };
  return Object.keys(given).length === 4 ? (given as StackSecrets) : { ...fallback(), ...given };
}
