import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { SpawnedProcess, Spawner } from './spawner';

/**
 * Node's own spawn: libuv forks the agent and execs the shim in the child. It needs nothing but
 * Node; on a virtual machine with costly page-table updates the fork of the agent's whole heap is
 * most of what a short attempt costs the host (ADR 0032).
 */
export class NodeSpawner implements Spawner {
  spawn(file: string, args: string[], o: { env: Record<string, string>; logPath: string }): SpawnedProcess {
    const log = openSync(o.logPath, 'a');
    try {
      const child = spawn(file, args, { detached: true, stdio: ['ignore', log, log], env: o.env });
      return {
        get pid() {
          return child.pid ?? null;
        },
        onSpawned: (cb) => {
          if (child.pid !== undefined) cb(child.pid);
        },
        onExit: (cb) => child.on('exit', (code, signal) => cb(code, signal)),
        onError: (cb) => child.on('error', cb),
        onLost: () => undefined,
      };
    } finally {
      closeSync(log);
    }
  }
}
