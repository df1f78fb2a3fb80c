import { join } from 'node:path';

/**
 * The files of one attempt in the agent's state directory: its record (`.json`), the shim's pid
 * (`.status.pid`) and exit status (`.status`) files, and what its shim opens as fd 3 (`.fd3`: its
 * sandbox's variables or its container's env file, readable by the agent only). One directory per node
 * (`attempts/<nodeId, URI-encoded>`): a node's records load without reading another's.
 */
export function attemptPaths(
  stateDir: string,
  nodeId: string,
  jobId: string,
  attempt: number,
): { dir: string; record: string; status: string; pid: string; fd3: string } {
  const dir = nodeStateDir(stateDir, nodeId);
  const base = join(dir, `${jobId}-${attempt}`);
  return { dir, record: `${base}.json`, status: `${base}.status`, pid: `${base}.status.pid`, fd3: `${base}.fd3` };
}

export function nodeStateDir(stateDir: string, nodeId: string): string {
  return join(stateDir, 'attempts', encodeURIComponent(nodeId));
}
