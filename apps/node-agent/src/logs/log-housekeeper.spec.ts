import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@gantry/testing';
import { AttemptLogs } from './attempt-logs';
import { LogHousekeeper } from './log-housekeeper';

const DAY = 24 * 3600 * 1000;
const NOW = Date.now();

describe('LogHousekeeper (real files)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gantry-housekeeper-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** A file last written `ageMs` ago. */
  const file = (name: string, ageMs: number, content = 'x\n') => {
    const path = join(dir, name);
    writeFileSync(path, content);
    utimesSync(path, (NOW - ageMs) / 1000, (NOW - ageMs) / 1000);
    return path;
  };

  it.each<[string, string, number, boolean, boolean]>([
    ['an old log of an ended attempt', 'job-a-1.log', 8 * DAY, false, true],
    ['an old gang node list', 'job-a-1.nodes', 8 * DAY, false, true],
    ['a log within retention', 'job-b-1.log', 6 * DAY, false, false],
    ['an old log of an attempt still running (a job that went quiet)', 'job-c-2.log', 8 * DAY, true, false],
    ['an old file that is not an attempt file', 'notes.txt', 8 * DAY, false, false],
  ])('retention: %s (%s)', async (_name, name, age, running, deleted) => {
    const logs = new AttemptLogs(dir);
    const m = /^(.+)-(\d+)\./.exec(name);
    if (running && m) logs.started(m[1], Number(m[2]));
    const path = file(name, age);
    const keeper = new LogHousekeeper(logs, { maxBytes: 1 << 20, capCheckMs: 1000, retentionMs: 7 * DAY }, silentLogger());
    expect(await keeper.sweep(NOW)).toBe(deleted ? 1 : 0);
    expect(existsSync(path)).toBe(!deleted);
  });

  it('caps only the logs of running attempts, and counts what it dropped for followers', async () => {
    const logs = new AttemptLogs(dir);
    const big = 'y'.repeat(99) + '\n';
    logs.started('job-r', 1);
    const running = file('job-r-1.log', 0, big.repeat(100));
    const ended = file('job-e-1.log', 0, big.repeat(100));
    const keeper = new LogHousekeeper(logs, { maxBytes: 4096, capCheckMs: 1000, retentionMs: 7 * DAY }, silentLogger());
    await keeper.capRunning();
    expect(readFileSync(running, 'utf8')).toBe(big.repeat(30)); // the newest 3,072 bytes, from a line start: 30 lines
    expect(logs.droppedBytes(running)).toBe(7000);
    expect(readFileSync(ended, 'utf8')).toHaveLength(10_000);
  });
});
