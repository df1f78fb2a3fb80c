import { generateKeyPairSync } from 'node:crypto';
import { CommandSigner, commandPublicKeys, commandSignatureValid } from './command-signature';
import { LOG_GRANT_MAX_TTL_MS, LogGrant, refuseLogGrant, signLogGrant } from './log-grant';

const pem = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const signer = new CommandSigner(pem());
const other = new CommandSigner(pem());
const keys = commandPublicKeys(signer.publicKeyPem);
const NOW = 1_800_000_000_000;
const grant: LogGrant = { jobId: 'job-1', attempt: 2, nodeId: 'gpu-1', exp: NOW + 60_000 };
const want = { jobId: 'job-1', attempt: 2, nodeIds: new Set(['gpu-1', 'gpu-2']) };

describe('log grants', () => {
  it('lets the bearer read exactly the attempt it names on its node', () => {
    expect(refuseLogGrant(signLogGrant(grant, signer), want, keys, NOW)).toEqual({ refusal: null, grant });
  });

  it.each<[string, () => string | undefined, object, string]>([
    ['no token', () => undefined, want, 'malformed'],
    ['garbage', () => 'not.a-grant', want, 'malformed'],
    ['three parts', () => `${signLogGrant(grant, signer)}.x`, want, 'malformed'],
    ['signed by another key', () => signLogGrant(grant, other), want, 'bad-signature'],
    [
      'a payload changed after signing',
      () => {
        const [, sig] = signLogGrant(grant, signer).split('.');
        return `${Buffer.from(JSON.stringify({ ...grant, jobId: 'job-2' })).toString('base64url')}.${sig}`;
      },
      want,
      'bad-signature',
    ],
    ['expired', () => signLogGrant({ ...grant, exp: NOW - 1 }, signer), want, 'expired'],
    ['valid for longer than an agent accepts', () => signLogGrant({ ...grant, exp: NOW + LOG_GRANT_MAX_TTL_MS + 1 }, signer), want, 'too-long'],
    ['for another job', () => signLogGrant({ ...grant, jobId: 'job-9' }, signer), want, 'out-of-scope'],
    ['for another attempt', () => signLogGrant({ ...grant, attempt: 1 }, signer), want, 'out-of-scope'],
    ['for a node this agent does not serve', () => signLogGrant({ ...grant, nodeId: 'gpu-3' }, signer), want, 'out-of-scope'],
  ])('refuses %s', (_name, token, w, refusal) => {
    expect(refuseLogGrant(token(), w as typeof want, keys, NOW).refusal).toBe(refusal);
  });

  it("cannot pass as a command's signature: the signed bytes start with a context line", () => {
    const [payload, sig] = signLogGrant(grant, signer).split('.');
    const asCommandHeader = `ed25519=${Buffer.from(sig, 'base64url').toString('base64')}`;
    expect(commandSignatureValid(Buffer.from(payload), asCommandHeader, keys)).toBe(false);
    expect(commandSignatureValid(Buffer.from(Buffer.from(payload, 'base64url').toString()), asCommandHeader, keys)).toBe(false);
  });
});
