import { readdirSync, readFileSync } from 'node:fs';

/**
 * The host pids of a job's own processes on this machine: those whose environment says
 * GANTRY_JOB_ID=<jobId> (every rank's process gets it). A sandboxed job sees only its own PID
 * namespace and cannot tell its host pid itself (ADR 0033), so tests look it up here.
 */
export function jobProcesses(jobId: string, procRoot = '/proc'): number[] {
  const needle = `\0GANTRY_JOB_ID=${jobId}\0`;
  return readdirSync(procRoot)
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return `\0${readFileSync(`${procRoot}/${p}/environ`, 'utf8')}`.includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}
