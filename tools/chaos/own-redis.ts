import { ChildProcess, spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { portOpen, waitFor } from '@gantry/stack';

/**
 * A redis-server of the chaos run's own, on its own port with nothing on disk (as Gantry runs Redis):
 * the Redis restart fault stops and starts this process, so no one else's Redis is touched.
 */
export class OwnRedis {
  private child: ChildProcess | null = null;

  constructor(
    readonly port: number,
    private readonly logDir: string,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (await portOpen(this.port)) throw new Error(`something already listens on ${this.port}: set CHAOS_REDIS_PORT (or a port offset) to a free port`);
    const log = openSync(join(this.logDir, `redis-${this.port}.log`), 'a');
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'], {
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    const child = this.child;
    await waitFor(
      `redis-server on ${this.port}`,
      async () => {
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode} (log ${this.logDir}/redis-${this.port}.log)`);
        return portOpen(this.port);
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
  }

  /** SIGTERM (Redis shuts down; with nothing saved it comes back empty), until the process is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    this.child = null;
  }
}
