import { readdirSync, readFileSync } from 'node:fs';

/**
 * The host pids of a job's own processes on this machine: those whose environment says
 * GANTRY_JOB_ID=<jobId> (every rank's process gets it), and of one attempt where given. A sandboxed job sees only its own PID
 * namespace and cannot tell its host pid itself (ADR 0033), so tests look it up here.
 */
export function jobProcesses(jobId: string, attempt?: number, procRoot = '/proc'): number[] {
  const needle = `\0GANTRY_JOB_ID=${jobId}\0`;
  const ofAttempt = attempt === undefined ? null : `\0GANTRY_ATTEMPT=${attempt}\0`;
  return readdirSync(procRoot)
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const env = `\0${readFileSync(`${procRoot}/${p}/environ`, 'utf8')}`;
        return env.includes(needle) && (ofAttempt === null || env.includes(ofAttempt));
      } catch {
        return false;
      }
    })
    .map(Number);
}
