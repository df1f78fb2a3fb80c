import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { attemptPaths, nodeStateDir } from './attempt-paths';
import { AttemptRecord, AttemptStore } from './attempt-record';

/**
 * Attempt records as one small JSON file each, written to a temporary name and renamed (a crash
 * mid-write leaves the previous version, never half a record). Synchronous: a record must be on
 * disk before the process it describes starts, or before the report it holds is sent.
 */
export class FileAttemptStore implements AttemptStore {
  private readonly made = new Set<string>();

  constructor(
    private readonly stateDir: string,
    private readonly logger: { warn(o: object, m: string): void },
  ) {
    mkdirSync(stateDir, { recursive: true });
  }

  save(record: AttemptRecord): void {
    const p = attemptPaths(this.stateDir, record.nodeId, record.jobId, record.attempt);
    if (!this.made.has(p.dir)) {
      mkdirSync(p.dir, { recursive: true });
      this.made.add(p.dir);
    }
    writeFileSync(`${p.record}.tmp`, JSON.stringify(record));
    renameSync(`${p.record}.tmp`, p.record);
  }

  remove(r: Pick<AttemptRecord, 'nodeId' | 'jobId' | 'attempt'>): void {
    const p = attemptPaths(this.stateDir, r.nodeId, r.jobId, r.attempt);
    for (const f of [p.record, p.status, p.pid]) rmSync(f, { force: true });
  }

  load(nodeId: string): AttemptRecord[] {
    const dir = nodeStateDir(this.stateDir, nodeId);
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.json'));
    } catch {
      return [];
    }
    const records: AttemptRecord[] = [];
    for (const n of names) {
      try {
        const r = JSON.parse(readFileSync(join(dir, n), 'utf8')) as AttemptRecord;
        if (r.v === 1 && r.nodeId === nodeId) records.push(r);
      } catch (err) {
        // Not ours to guess at: left in place for whoever looks, and said once.
        this.logger.warn({ err, file: join(dir, n) }, 'unreadable attempt record ignored');
      }
    }
    return records.sort((a, b) => a.startedAt - b.startedAt);
  }
}
