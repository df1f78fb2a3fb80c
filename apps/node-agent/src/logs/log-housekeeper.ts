import { readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ATTEMPT_FILE, AttemptLogs } from './attempt-logs';
import { capLog } from './log-cap';

/** What the housekeeper writes to: the service's logger, or a test's. */
export type HousekeepingLogger = Record<'debug' | 'info' | 'warn', (o: object, m: string) => void>;

export interface LogHousekeeping {
  /** GANTRY_AGENT_LOG_MAX_BYTES */
  maxBytes: number;
  /** GANTRY_AGENT_LOG_CAP_CHECK_MS */
  capCheckMs: number;
  /** GANTRY_AGENT_LOG_RETENTION_MS */
  retentionMs: number;
}

/**
 * Keeps the node's disk bounded (contract 4.4): every capCheckMs the logs of running attempts are
 * cut back to their newest bytes when over the cap (capLog); every so often (a tenth of the
 * retention, at most hourly) the files of attempts not running that were last written longer than
 * the retention ago are deleted.
 */
export class LogHousekeeper {
  private capTimer: NodeJS.Timeout | null = null;
  private sweepTimer: NodeJS.Timeout | null = null;
  private capping = false;

  constructor(
    private readonly logs: AttemptLogs,
    private readonly opts: LogHousekeeping,
    private readonly logger: HousekeepingLogger,
  ) {}

  start(): void {
    this.capTimer = setInterval(() => void this.capRunning(), this.opts.capCheckMs);
    this.capTimer.unref();
    this.sweepTimer = setInterval(() => void this.sweep(), Math.min(this.opts.retentionMs / 10, 3_600_000));
    this.sweepTimer.unref();
    void this.sweep();
  }

  stop(): void {
    if (this.capTimer) clearInterval(this.capTimer);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
  }

  async capRunning(): Promise<void> {
    if (this.capping) return;
    this.capping = true;
    try {
      for (const path of this.logs.runningPaths()) {
        try {
          const dropped = await capLog(path, this.opts.maxBytes);
          this.logs.addDropped(path, dropped);
          if (dropped > 0) this.logger.debug({ path, dropped }, 'log capped');
        } catch (err) {
          this.logger.warn({ err, path }, 'could not cap a log');
        }
      }
    } finally {
      this.capping = false;
    }
  }

  /** Deletes what retention says is gone; returns how many files. */
  async sweep(now = Date.now()): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.logs.workdir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      const m = ATTEMPT_FILE.exec(name);
      if (!m || this.logs.isRunning(this.logs.path(m[1], Number(m[2])))) continue;
      const path = join(this.logs.workdir, name);
      try {
        if (now - (await stat(path)).mtimeMs > this.opts.retentionMs) {
          await unlink(path);
          removed++;
        }
      } catch {
        // gone meanwhile
      }
    }
    if (removed > 0) this.logger.info({ removed }, 'old attempt logs deleted');
    return removed;
  }
}
