import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { KafkaCredentials, kafkaEnvFor, readKafkaCredentials } from './kafka-credentials';

/**
 * What scripts that bring up their own infrastructure share (the benches, `test:chaos`): commands
 * run to completion, a local broker from scripts/kafka, a database recreated from the migrations.
 */

/** Commands in flight, so a script's Ctrl-C handler can stop them too. */
const children = new Set<ChildProcess>();

export function killRunningCommands(): void {
  for (const c of children) c.kill('SIGTERM');
}

/** Runs a command to completion and returns its stdout; rejects with its output's tail on a non-zero exit. */
export function runCommand(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => {
      children.delete(child);
      reject(e);
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}\n${(err || out).trim().split('\n').slice(-20).join('\n')}`));
    });
  });
}

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host });
    const done = (open: boolean) => {
      s.destroy();
      resolve(open);
    };
    s.setTimeout(2000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** A single-node KRaft broker run by scripts/kafka, with its data under .cache/kafka/data-<port>. */
export class LocalKafkaBroker {
  readonly dataDir: string;

  constructor(
    private readonly root: string,
    readonly port: number,
  ) {
    this.dataDir = join(root, '.cache', 'kafka', `data-${port}`);
  }

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts the broker unless one already listens there; returns whether this call started it. */
  async startIfAbsent(opts: { fresh?: boolean } = {}): Promise<boolean> {
    if (await portOpen(this.port)) return false;
    // A fresh broker begins empty, so whoever reads a topic from the start reads only this run.
    if (opts.fresh) rmSync(this.dataDir, { recursive: true, force: true });
    await this.start();
    return true;
  }

  async start(): Promise<void> {
    await runCommand('bash', [join(this.root, 'scripts/kafka/start.sh'), '--port', String(this.port), '--data-dir', this.dataDir], { cwd: this.root });
  }

  /** Graceful: SIGTERM, then SIGKILL after KAFKA_STOP_TIMEOUT_S (the script's default, 30 s). */
  async stop(): Promise<void> {
    await runCommand('bash', [join(this.root, 'scripts/kafka/stop.sh'), '--data-dir', this.dataDir], { cwd: this.root });
  }

  /** The broker's users and passwords, written by start.sh when it formatted the storage. */
  credentials(): KafkaCredentials {
    return readKafkaCredentials(this.credentialsFile);
  }

  get credentialsFile(): string {
    return join(this.dataDir, 'credentials.json');
  }

  /** Topics and ACLs (tools/infra/prepare-kafka.ts), as the broker's admin. */
  async createTopics(): Promise<void> {
    await runCommand(process.execPath, [join(this.root, 'dist/tools/infra/prepare-kafka.js')], {
      cwd: this.root,
      env: { KAFKA_BROKERS: this.brokers, ...kafkaEnvFor(this.credentials(), 'admin') },
    });
  }

  pid(): number | null {
    try {
      return Number(readFileSync(join(this.dataDir, 'broker.pid'), 'utf8').trim()) || null;
    } catch {
      return null;
    }
  }
}

/**
 * Drops the database (every run starts from an empty schema), then creates and migrates it. Refuses
 * a name that does not match `allowed`, so a mistyped URL cannot drop a database someone else uses.
 */
export async function recreateDatabase(root: string, url: string, allowed: RegExp): Promise<void> {
  const name = decodeURIComponent(new URL(url).pathname.slice(1));
  if (!allowed.test(name)) throw new Error(`refusing to drop database "${name}": only names matching ${allowed} are recreated`);
  await runCommand(process.execPath, [join(root, 'dist/tools/infra/ensure-databases.js'), '--recreate', url], { cwd: root });
  await runCommand(process.execPath, [join(root, 'dist/libs/persistence/src/cli/migrate.js')], { cwd: root, env: { DATABASE_URL: url } });
}

/** One short-lived connection. */
export async function withDb<T>(url: string, fn: (c: Client) => Promise<T>, applicationName = 'gantry-tool'): Promise<T> {
  const c = new Client({ connectionString: url, application_name: applicationName });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Empties one logical Redis db (a script's own: the server is shared). */
export async function flushRedisDb(url: string): Promise<void> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await r.connect();
  try {
    await r.flushdb();
  } finally {
    r.disconnect();
  }
}
