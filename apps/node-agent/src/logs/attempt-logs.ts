import { join } from 'node:path';

/** Where an attempt's log lives on its node: the process executor writes `<workdir>/<jobId>-<attempt>.log` (stdout and stderr). */
export function attemptLogPath(workdir: string, jobId: string, attempt: number): string {
  return join(workdir, `${jobId}-${attempt}.log`);
}

/** `<jobId>-<attempt>.log` or `.nodes` (the gang's node list, ADR 0019): what this agent writes per attempt. */
export const ATTEMPT_FILE = /^(.+)-(\d+)\.(log|nodes)$/;

export type AttemptLogState = { kind: 'running' } | { kind: 'ended'; endedAt: number } | { kind: 'unknown' };

/** Ended attempts remembered (when they ended, what the cap dropped), oldest forgotten first. */
const ENDED_MEMORY = 10_000;

/**
 * The logs of this agent's attempts as the log server and the capper need them: which are being
 * written now (and by how many ranks: simulated nodes of one process share a workdir), when the
 * others ended, and how many bytes the cap has dropped from the front of each, so a follower
 * keeps its place across a trim (its position is counted in bytes ever written).
 */
export class AttemptLogs {
  private readonly live = new Map<string, number>();
  private readonly ended = new Map<string, number>();
  private readonly dropped = new Map<string, number>();

  constructor(
    readonly workdir: string,
    private readonly now: () => number = Date.now,
  ) {}

  path(jobId: string, attempt: number): string {
    return attemptLogPath(this.workdir, jobId, attempt);
  }

  started(jobId: string, attempt: number): void {
    const k = this.path(jobId, attempt);
    this.live.set(k, (this.live.get(k) ?? 0) + 1);
    this.ended.delete(k);
  }

  finished(jobId: string, attempt: number): void {
    const k = this.path(jobId, attempt);
    const n = (this.live.get(k) ?? 1) - 1;
    if (n > 0) return void this.live.set(k, n);
    this.live.delete(k);
    this.ended.set(k, this.now());
    if (this.ended.size > ENDED_MEMORY) {
      const oldest = this.ended.keys().next().value!;
      this.ended.delete(oldest);
      this.dropped.delete(oldest);
    }
  }

  state(jobId: string, attempt: number): AttemptLogState {
    const k = this.path(jobId, attempt);
    if (this.live.has(k)) return { kind: 'running' };
    const endedAt = this.ended.get(k);
    return endedAt === undefined ? { kind: 'unknown' } : { kind: 'ended', endedAt };
  }

  isRunning(path: string): boolean {
    return this.live.has(path);
  }

  /** The logs being written now: the only ones the cap has to watch. */
  runningPaths(): string[] {
    return [...this.live.keys()];
  }

  droppedBytes(path: string): number {
    return this.dropped.get(path) ?? 0;
  }

  addDropped(path: string, bytes: number): void {
    if (bytes > 0) this.dropped.set(path, this.droppedBytes(path) + bytes);
  }
}
