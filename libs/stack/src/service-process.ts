import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { waitFor } from './wait-for';

export const SERVICES = ['api-gateway', 'scheduler', 'heartbeat-ingester', 'reconciler', 'node-agent'] as const;
export type ServiceName = (typeof SERVICES)[number];

export interface ServiceProcessOptions {
  name: string;
  service: ServiceName;
  port: number;
  env: Record<string, string>;
  logDir: string;
  /** Repository root holding dist/. */
  root: string;
}

/** One Gantry service as a real OS process, started from the build output exactly as in production. */
/**
 * The V8 flags every service runs with, here as in the Dockerfile's NODE_OPTIONS. A 32 MiB young
 * generation (default 16) halves scavenges in the per-message paths (heartbeats, reports; what
 * that saves: ADR 0010).
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=32'];

export class ServiceProcess {
  private child: ChildProcess | null = null;
  readonly logFile: string;
  private exited: Promise<number | null> = Promise.resolve(null);

  constructor(readonly opts: ServiceProcessOptions) {
    this.logFile = join(opts.logDir, `${opts.name}.log`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.opts.port}`;
  }

  start(): void {
    mkdirSync(dirname(this.logFile), { recursive: true });
    const log = createWriteStream(this.logFile, { flags: 'a' });
    const main = join(this.opts.root, 'dist', 'apps', this.opts.service, 'src', 'main.js');
    this.child = spawn(process.execPath, ['--enable-source-maps', ...SERVICE_NODE_FLAGS, main], {
      env: { ...process.env, ...this.opts.env, GANTRY_HTTP_PORT: String(this.opts.port), GANTRY_HTTP_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Both streams share one file: neither may end it, or a late write from the other throws.
    this.child.stdout?.pipe(log, { end: false });
    this.child.stderr?.pipe(log, { end: false });
    const child = this.child;
    child.once('close', () => log.end());
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** The signal that ended the process (SIGTERM after a graceful stop, SIGKILL if it had to be killed), or null. */
  get exitSignal(): NodeJS.Signals | null {
    return this.child?.signalCode ?? null;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  logTail(lines = 30): string {
    try {
      return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  /** Polls /readyz until 200, failing with the service's log tail when it exits or the deadline passes. */
  async ready(timeoutMs: number): Promise<void> {
    await waitFor(
      `${this.opts.name} ready on ${this.url}/readyz`,
      async () => {
        if (!this.running) throw new Error(`${this.opts.name} exited (log: ${this.logFile})`);
        const res = await fetch(`${this.url}/readyz`);
        return res.status === 200;
      },
      { timeoutMs, intervalMs: 200, onTimeout: () => `log ${this.logFile}:\n${this.logTail()}` },
    );
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.child!.kill('SIGTERM');
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  kill(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }
}
