import { readFileSync } from 'node:fs';

/**
 * Whether `pid` is still the shim that writes `statusPath`: its command line names that file. A
 * pid that was reused by another process since (the agent was down for long, the host rebooted)
 * has another command line; a shim that ended and is a zombie has none. Only then may the agent
 * signal the pid's group.
 */
export function isShimAlive(pid: number, statusPath: string, procRoot = '/proc'): boolean {
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    return readFileSync(`${procRoot}/${pid}/cmdline`, 'utf8').split('\0').includes(statusPath);
  } catch {
    return false;
  }
}

/** The pid the shim wrote, or null. */
export function shimPid(pidPath: string): number | null {
  try {
    const n = Number(readFileSync(pidPath, 'utf8').trim());
    return Number.isInteger(n) && n > 1 ? n : null;
  } catch {
    return null;
  }
}
