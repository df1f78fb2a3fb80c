import { chmodSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the tests' jobs may write on this host: attempts run sandboxed (ADR 0033) and see none of
 * the host's /tmp, so every agent the tests start is given this root as a writable path
 * (GANTRY_AGENT_SANDBOX_WRITABLE_PATHS), as an operator would give shared scratch storage.
 */
export const JOB_SCRATCH_ROOT = join(tmpdir(), 'gantry-job-scratch');

/** The agent env that lets test jobs write under JOB_SCRATCH_ROOT. */
export const JOB_SCRATCH_AGENT_ENV = { GANTRY_AGENT_SANDBOX_WRITABLE_PATHS: JOB_SCRATCH_ROOT } as const;

/** JOB_SCRATCH_ROOT, made if missing: sticky and open to every uid, as /tmp (an agent skips a writable path that does not exist). */
export function ensureJobScratchRoot(): string {
  mkdirSync(JOB_SCRATCH_ROOT, { recursive: true });
  chmodSync(JOB_SCRATCH_ROOT, 0o1777);
  return JOB_SCRATCH_ROOT;
}

/** A new directory under JOB_SCRATCH_ROOT that any job's uid may write. */
export function jobScratchDir(prefix: string): string {
  ensureJobScratchRoot();
  const dir = mkdtempSync(join(JOB_SCRATCH_ROOT, prefix));
  chmodSync(dir, 0o777);
  return dir;
}
