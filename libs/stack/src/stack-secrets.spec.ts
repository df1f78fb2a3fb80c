import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateStackSecrets, persistentStackSecrets } from './stack-secrets';

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
