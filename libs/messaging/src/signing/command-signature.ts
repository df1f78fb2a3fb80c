import { KeyObject, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';

const PREFIX = 'ed25519=';

/**
 * Signs agent commands (contract 4.1): header `gantry-signature` = `ed25519=` + base64 of the
 * Ed25519 signature of the value's bytes. The control plane holds the private key; agents only the
 * public one, so a process that can write to the command topic still cannot make an agent act.
 */
export class CommandSigner {
  private readonly key: KeyObject;
  readonly publicKeyPem: string;

  constructor(privateKeyPem: string) {
    this.key = createPrivateKey(privateKeyPem);
    if (this.key.asymmetricKeyType !== 'ed25519') throw new Error(`the command signing key must be Ed25519, got ${this.key.asymmetricKeyType}`);
    this.publicKeyPem = createPublicKey(this.key).export({ type: 'spki', format: 'pem' }).toString();
  }

  sign(value: Buffer | string): string {
    return PREFIX + sign(null, typeof value === 'string' ? Buffer.from(value) : value, this.key).toString('base64');
  }
}

/** The public keys an agent trusts: one or more PEM (SPKI) blocks, so the control plane's key can be rotated. */
export function commandPublicKeys(pem: string): KeyObject[] {
  const blocks = pem.match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
  if (blocks.length === 0) throw new Error('no PEM public key (-----BEGIN PUBLIC KEY-----) found');
  return blocks.map((b) => {
    const k = createPublicKey(b);
    if (k.asymmetricKeyType !== 'ed25519') throw new Error(`command public keys must be Ed25519, got ${k.asymmetricKeyType}`);
    return k;
  });
}

/** Whether `header` is a valid signature of `value` by one of `keys`. */
export function commandSignatureValid(value: Buffer, header: string | undefined, keys: KeyObject[]): boolean {
  if (header === undefined || !header.startsWith(PREFIX)) return false;
  const signature = Buffer.from(header.slice(PREFIX.length), 'base64');
  if (signature.length !== 64) return false;
  return keys.some((k) => verify(null, value, k, signature));
}
