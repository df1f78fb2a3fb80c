import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CgroupLimits,
  CgroupMount,
  agentCgroupDirs,
  attemptCgroupDirs,
  cgroupParents,
  detectCgroupMount,
  limitWrites,
  oomEventsFile,
  oomKilled,
} from './cgroup-layout';

/** One attempt's cgroup (one directory under v2, a cpu and a memory one under v1). */
export interface AttemptCgroup {
  /** The `cgroup.procs` files the shim writes its pid to. */
  procsFiles: string[];
  /** Whether the kernel OOM-killed a process of it. */
  oomKilled(): boolean;
  /** Kills what is left in it and removes it. */
  remove(): void;
}

/**
 * Creates a cgroup per attempt with its cpuCores and memoryMiB as limits (layout and values:
 * cgroup-layout.ts). Built only by `probe`, which has already created the agent's parent cgroups,
 * so a host where that is not allowed never gets this far (the attempts run without limits).
 */
export class AttemptCgroups {
  private constructor(
    readonly mount: CgroupMount,
    private readonly agentId: string,
  ) {}

  /**
   * This host's cgroups if the agent may create its own under them, else why not: no cgroup mount,
   * a read-only one (an unprivileged container), or a v2 parent whose controllers cannot be enabled
   * (a v2 cgroup with processes in it cannot delegate: the agent's own, in a container with a private
   * cgroup namespace).
   */
  static probe(agentId: string, root: string, mountsText = readFileSync('/proc/self/mounts', 'utf8')): AttemptCgroups | { unavailable: string } {
    const mount = detectCgroupMount(mountsText, root);
    if (!mount) return { unavailable: `no cgroup v2 at ${root} nor v1 cpu and memory hierarchies under it` };
    try {
      for (const dir of cgroupParents(mount, agentId)) {
        mkdirSync(dir, { recursive: true });
        if (mount.version === 2) enableControllers(join(dir, '..'));
      }
      if (mount.version === 2) enableControllers(cgroupParents(mount, agentId).at(-1)!);
      probeMove(attemptCgroupDirs(mount, agentId, 'probe', process.pid));
    } catch (err) {
      return { unavailable: `cgroup v${mount.version} not writable: ${(err as Error).message}` };
    }
    return new AttemptCgroups(mount, agentId);
  }

  /**
   * Creates the attempt's cgroup with its limits. One is made even for a job that asks for none:
   * it takes the attempt out of the agent's own cgroup, which a DaemonSet's pod update would
   * otherwise kill with the agent (ADR 0020).
   */
  create(jobId: string, attempt: number, limits: CgroupLimits): AttemptCgroup {
    const writes = limitWrites(this.mount, limits);
    const dirs = attemptCgroupDirs(this.mount, this.agentId, jobId, attempt);
    for (const d of dirs) mkdirSync(d, { recursive: true });
    const dirOf = (c: 'cpu' | 'memory') => (this.mount.version === 2 ? dirs[0] : dirs[c === 'cpu' ? 0 : 1]);
    for (const w of writes) {
      const file = join(dirOf(w.controller), w.file);
      // memsw and swap.max exist only where swap is accounted; without swap accounting there is no swap to limit.
      if (!existsSync(file) && /swap|memsw/.test(w.file)) continue;
      writeFileSync(file, w.value);
    }
    return this.handle(dirs);
  }

  /** Removes the agent's own parent cgroups if no attempt is left in them (a stop that leaves attempts running keeps them). */
  removeIfEmpty(): void {
    for (const dir of agentCgroupDirs(this.mount, this.agentId)) {
      try {
        rmdirSync(dir);
      } catch {
        // attempts still in it, or gone
      }
    }
  }

  /** The cgroup an attempt started by an earlier agent process runs in, if it has one. */
  find(jobId: string, attempt: number): AttemptCgroup | null {
    const dirs = attemptCgroupDirs(this.mount, this.agentId, jobId, attempt);
    return dirs.every((d) => existsSync(d)) ? this.handle(dirs) : null;
  }

  private handle(dirs: string[]): AttemptCgroup {
    const memoryDir = this.mount.version === 2 ? dirs[0] : dirs[1];
    return {
      procsFiles: dirs.map((d) => join(d, 'cgroup.procs')),
      oomKilled: () => {
        try {
          return oomKilled(readFileSync(join(memoryDir, oomEventsFile(this.mount)), 'utf8'));
        } catch {
          return false;
        }
      },
      remove: () => removeCgroups(dirs),
    };
  }
}

/**
 * Moves a short-lived sh into a cgroup made for the purpose, as a shim would, and removes it: a
 * writable tree is not enough where the agent's cgroup namespace does not reach it (a container
 * with a private cgroup namespace, even privileged, cannot move a process outside its root).
 */
function probeMove(dirs: string[]): void {
  for (const d of dirs) mkdirSync(d, { recursive: true });
  try {
    const files = dirs.map((d) => join(d, 'cgroup.procs'));
    execFileSync('/bin/sh', ['-c', 'for f in "$@"; do echo $$ > "$f" || exit 1; done', 'gantry-cgroup-probe', ...files], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 10_000,
    });
  } catch (err) {
    throw new Error(`cannot move a process into ${dirs[0]}: ${((err as { stderr?: Buffer }).stderr?.toString() || (err as Error).message).trim()}`);
  } finally {
    for (const d of dirs) {
      try {
        rmdirSync(d);
      } catch {
        // its process may still be exiting; an empty cgroup costs a directory
      }
    }
  }
}

function enableControllers(dir: string): void {
  const file = join(dir, 'cgroup.subtree_control');
  const enabled = readFileSync(file, 'utf8').split(/\s+/);
  if (!enabled.includes('cpu') || !enabled.includes('memory')) writeFileSync(file, '+cpu +memory');
}

/** Removes the directories, first SIGKILLing any process still in them (what the command left behind). */
function removeCgroups(dirs: string[]): void {
  for (const d of dirs) {
    try {
      for (const pid of readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // gone already
        }
      }
      rmdirSync(d);
    } catch {
      // Busy for a moment after its last process died, or gone: the next start of the same attempt name never comes, and
      // an empty cgroup costs nothing but a directory; retried once later.
      setTimeout(() => {
        try {
          rmdirSync(d);
        } catch {
          // left behind; empty
        }
      }, 1_000).unref();
    }
  }
}
