import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateStackSecrets, persistentStackSecrets, stackSecretsFromEnv } from './stack-secrets';

describe('persistentStackSecrets', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gantry-secrets-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('makes every secret once, each of its own, and keeps them (mode 0600) for the next start', () => {
    const first = persistentStackSecrets(join(dir, 'secrets'));
    expect(new Set([first.nodeCredentialSecret, first.cursorSecret, first.commandSigningKey]).size).toBe(3);
    expect(first.cursorSecret.length).toBeGreaterThanOrEqual(32);
    expect(persistentStackSecrets(join(dir, 'secrets'))).toEqual(first);
    expect(statSync(join(dir, 'secrets', 'control-plane-secrets.json')).mode & 0o777).toBe(0o600);
  });

  it('adds a secret that a file written before it lacks, keeping the others', () => {
    const { cursorSecret: _none, ...older } = generateStackSecrets();
    const file = join(dir, 'control-plane-secrets.json');
    writeFileSync(file, JSON.stringify(older));
    const s = persistentStackSecrets(dir);
    expect(s).toMatchObject(older);
    expect(s.cursorSecret.length).toBeGreaterThanOrEqual(32);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(s);
  });
});

describe('stackSecretsFromEnv', () => {
  const names = ['GANTRY_COMMAND_SIGNING_KEY', 'GANTRY_COMMAND_PUBLIC_KEY', 'GANTRY_NODE_CREDENTIAL_SECRET', 'GANTRY_CURSOR_SECRET'];
  const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
  afterEach(() => {
    for (const n of names) {
      if (saved[n] === undefined) delete process.env[n];
      else process.env[n] = saved[n];
    }
  });

  it.each<[string, Record<string, string>, (kept: ReturnType<typeof generateStackSecrets>) => object]>([
    ['none set: the kept ones', {}, (kept) => kept],
    ['only the cursor secret: it, and the kept others', { GANTRY_CURSOR_SECRET: 'c'.repeat(32) }, (kept) => ({ ...kept, cursorSecret: 'c'.repeat(32) })],
    ['half of the key pair: the kept pair', { GANTRY_COMMAND_SIGNING_KEY: 'lonely-half' }, (kept) => kept],
  ])('%s', (_name, env, expected) => {
    for (const n of names) delete process.env[n];
    Object.assign(process.env, env);
    const kept = generateStackSecrets();
    expect(stackSecretsFromEnv(() => kept)).toEqual(expected(kept));
  });

  it('takes all four from the environment without asking for kept ones', () => {
    const s = generateStackSecrets();
    Object.assign(process.env, {
      GANTRY_COMMAND_SIGNING_KEY: s.commandSigningKey,
      GANTRY_COMMAND_PUBLIC_KEY: s.commandPublicKey,
      GANTRY_NODE_CREDENTIAL_SECRET: s.nodeCredentialSecret,
      GANTRY_CURSOR_SECRET: s.cursorSecret,
    });
    expect(
      stackSecretsFromEnv(() => {
        throw new Error('not asked');
      }),
    ).toEqual(s);
  });
});
