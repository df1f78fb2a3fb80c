import { createHmac, generateKeyPairSync } from 'node:crypto';
import { CommandSigner, commandPublicKeys, commandSignatureValid } from './command-signature';
import { nodeSignatureMatches, nodeSigningKey, signNodeMessage } from './node-signature';

const pem = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('node message signatures', () => {
  const key = nodeSigningKey('credential-of-node-a');
  const value = Buffer.from('{"nodeId":"a","seq":1}');

  it('is v1= and the lowercase hex HMAC-SHA256 of the value with the credential bytes as key (contract 4.1)', () => {
    const expected = createHmac('sha256', Buffer.from('credential-of-node-a', 'utf8')).update(value).digest('hex');
    expect(signNodeMessage(value, key)).toBe(`v1=${expected}`);
  });

  it.each([
    ['the signature', (s: string) => s, true],
    ['no header', () => undefined, false],
    ['another key', () => signNodeMessage(value, nodeSigningKey('credential-of-node-b')), false],
    ['a changed value', () => signNodeMessage(Buffer.from('{"nodeId":"a","seq":2}'), key), false],
    ['upper-case hex', (s: string) => s.toUpperCase().replace('V1=', 'v1='), false],
    ['no prefix', (s: string) => s.slice(3), false],
    ['a truncated signature', (s: string) => s.slice(0, -2), false],
    ['non-hex', (s: string) => `v1=${'zz'.repeat(32)}`.slice(0, s.length), false],
  ])('%s', (_name, header, ok) => {
    expect(nodeSignatureMatches(value, header(signNodeMessage(value, key)), key)).toBe(ok);
  });
});

describe('command signatures', () => {
  const signer = new CommandSigner(pem());
  const other = new CommandSigner(pem());
  const value = Buffer.from('{"type":"RUN"}');

  it('verifies with the signer public key, not with another', () => {
    const header = signer.sign(value);
    expect(header).toMatch(/^ed25519=[A-Za-z0-9+/]+=*$/);
    expect(commandSignatureValid(value, header, commandPublicKeys(signer.publicKeyPem))).toBe(true);
    expect(commandSignatureValid(value, header, commandPublicKeys(other.publicKeyPem))).toBe(false);
    expect(commandSignatureValid(Buffer.from('{"type":"KILL"}'), header, commandPublicKeys(signer.publicKeyPem))).toBe(false);
    expect(commandSignatureValid(value, undefined, commandPublicKeys(signer.publicKeyPem))).toBe(false);
    expect(commandSignatureValid(value, 'ed25519=AAAA', commandPublicKeys(signer.publicKeyPem))).toBe(false);
  });

  it('accepts any of several trusted keys (rotation)', () => {
    const keys = commandPublicKeys(`${other.publicKeyPem}\n${signer.publicKeyPem}`);
    expect(keys).toHaveLength(2);
    expect(commandSignatureValid(value, signer.sign(value), keys)).toBe(true);
  });

  it('refuses keys that are not Ed25519', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(() => new CommandSigner(rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())).toThrow(/Ed25519/);
    expect(() => commandPublicKeys(rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString())).toThrow(/Ed25519/);
    expect(() => commandPublicKeys('nothing')).toThrow(/PEM/);
  });
});
