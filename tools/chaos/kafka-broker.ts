import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { runCommand } from './run-command';

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    const done = (open: boolean) => {
      s.destroy();
      resolve(open);
    };
    s.setTimeout(2000, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** The chaos run's own single-node broker (scripts/kafka), which the "kafka restart" fault stops and starts. */
export class KafkaBroker {
  readonly dataDir: string;

  constructor(private readonly root: string, readonly port: number) {
    this.dataDir = join(root, '.cache', 'kafka', `data-${port}`);
  }

  get brokers(): string {
    return `127.0.0.1:${this.port}`;
  }

  /**
   * Starts the broker unless one already listens; returns whether this call started it. A broker
   * this run starts begins empty, so the audit of job reports reads only this run's history.
   */
  async startFresh(): Promise<boolean> {
    if (await portOpen(this.port)) return false;
    rmSync(this.dataDir, { recursive: true, force: true });
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

  async createTopics(): Promise<void> {
    await runCommand(process.execPath, [join(this.root, 'dist/tools/infra/create-topics.js')], { cwd: this.root, env: { KAFKA_BROKERS: this.brokers } });
  }
}
