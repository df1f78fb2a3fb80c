import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { portOpen, runCommand } from '@gantry/stack';

/**
 * A Postgres cluster of the chaos run's own (initdb into a temp dir, pg_ctl on its own port), so
 * the Postgres restart fault restarts nothing anyone else uses. Postgres refuses to run as root, so
 * when the run is root the cluster belongs to the `postgres` user (runuser).
 */
export class OwnPostgres {
  private dir: string | null = null;

  constructor(
    private readonly bin: string,
    readonly port: number,
  ) {}

  static available(bin: string): boolean {
    return existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'));
  }

  private get asRoot(): boolean {
    return process.getuid?.() === 0;
  }

  /** Runs a Postgres binary, as `postgres` when the run is root. */
  private run(tool: string, args: string[]): Promise<string> {
    const cmd = join(this.bin, tool);
    // From the cluster's own directory: the postgres user may not be allowed into the checkout.
    const opts = { cwd: this.dir ?? tmpdir() };
    return this.asRoot ? runCommand('runuser', ['-u', 'postgres', '--', cmd, ...args], opts) : runCommand(cmd, args, opts);
  }

  get dataDir(): string {
    if (!this.dir) throw new Error('own Postgres not initialised');
    return join(this.dir, 'data');
  }

  get logFile(): string {
    return join(this.dir!, 'postgres.log');
  }

  /** initdb (trust auth for local connections: the cluster lives for one run, on loopback only), then start. */
  async init(): Promise<void> {
    if (await portOpen(this.port)) throw new Error(`something already listens on ${this.port}: set CHAOS_POSTGRES_PORT (or a port offset) to a free port`);
    this.dir = mkdtempSync(join(tmpdir(), 'gantry-chaos-pg-'));
    if (this.asRoot) await runCommand('chown', ['postgres:postgres', this.dir]);
    await this.run('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions']);
    await this.start();
  }

  async start(): Promise<void> {
    // Enough connections for two gateways, two schedulers, the ingester, the reconciler and the run's own checks.
    const opts = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.dir} -c max_connections=300`;
    await this.run('pg_ctl', ['-D', this.dataDir, '-l', this.logFile, '-o', opts, '-w', '-t', '60', 'start']);
  }

  /** `fast`: clients are disconnected and open transactions rolled back, as in an operator's restart. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.run('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
  }

  /** Stops the cluster and deletes its directory. */
  async destroy(): Promise<void> {
    if (!this.dir) return;
    await this.stop('fast').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}
