import { execFileSync } from 'node:child_process';
import { accessSync, closeSync, constants, existsSync, openSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { GpuDeviceFiles } from './gpu-device-files';
import { OwnerUids } from './owner-uids';
import { SandboxTools, isWithin, sandboxArgv } from './sandbox-argv';
import { UidRange } from './uid-allocation';

/** Where the sandbox's programs are looked for: fixed directories, never the agent's PATH. */
const TOOL_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin'];
/** The PATH a sandboxed job starts with unless its env sets one: the agent's may name directories the job cannot see. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** /dev/shm of an attempt without a memory limit, bytes (Docker's default). */
const SHM_WITHOUT_LIMIT = 64 * 1024 * 1024;

export interface AttemptSandboxOptions {
  /** Host paths jobs see read-only (GANTRY_AGENT_SANDBOX_PATHS); those missing on this host are left out. */
  hostPaths: string[];
  /** Host paths jobs may write (GANTRY_AGENT_SANDBOX_WRITABLE_PATHS); those missing are left out. */
  writablePaths?: string[];
  /** The agent's own paths (state, logs, credentials): hidden wherever a host path would show them. */
  agentPaths: string[];
  uidRange: UidRange;
  /** The state directory, where owner-uids.json is kept. */
  stateDir: string;
  gpuDevices?: GpuDeviceFiles;
}

/** What the executor asks of the sandbox for one rank. */
export interface SandboxRequest {
  owner: string;
  command: string[];
  env: Record<string, string>;
  gpuIndices?: number[];
  hostIpc: boolean;
  memoryMiB: number;
  readOnlyFiles: string[];
}

/**
 * Runs attempts as unprivileged tenants of their node (contract 5.1, ADR 0033): each with the uid
 * of its owner (OwnerUids) in namespaces of its own (sandboxArgv), built by bubblewrap. `probe`
 * checks at start that this host can: the tools exist, the agent may switch uids (root), and an
 * unprivileged user may make the namespaces (a trial sandbox runs `true`).
 */
export class AttemptSandbox {
  private constructor(
    private readonly tools: SandboxTools,
    private readonly uids: OwnerUids,
    private readonly hostPaths: string[],
    private readonly writablePaths: string[],
    private readonly hidden: string[],
    private readonly gpus: GpuDeviceFiles,
  ) {}

  static probe(o: AttemptSandboxOptions): AttemptSandbox | { unavailable: string } {
    const tools = { setpriv: findTool('setpriv'), bwrap: findTool('bwrap'), env: findTool('env') };
    const missing = Object.entries(tools)
      .filter(([, p]) => p === null)
      .map(([n]) => n);
    if (missing.length > 0) return { unavailable: `${missing.join(', ')} not found in ${TOOL_DIRS.join(':')} (Debian: bubblewrap, util-linux, coreutils)` };
    const t = tools as SandboxTools;
    const agentUid = process.getuid?.() ?? -1;
    if (agentUid !== 0) return { unavailable: `the agent runs as uid ${agentUid}: only root can run attempts as other users` };
    const hostPaths = o.hostPaths.filter((p) => existsSync(p));
    const writablePaths = (o.writablePaths ?? []).filter((p) => existsSync(p));
    const real = (p: string) => {
      try {
        return realpathSync(p);
      } catch {
        return p;
      }
    };
    const shown = [...hostPaths, ...writablePaths].map(real);
    const hidden = [...new Set(o.agentPaths.map(real))].filter((p) => shown.some((h) => isWithin(p, h)) && existsSync(p));
    const uids = new OwnerUids(join(o.stateDir, 'owner-uids.json'), o.uidRange, new Set([0, agentUid]));
    const sandbox = new AttemptSandbox(t, uids, hostPaths, writablePaths, hidden, o.gpuDevices ?? new GpuDeviceFiles());
    const trial = sandbox.plan({ owner: '', command: ['true'], env: {}, hostIpc: false, memoryMiB: 0, readOnlyFiles: [] }, o.uidRange.min);
    // Its fd 3 holds no variables: /dev/null.
    const none = openSync('/dev/null', 'r');
    try {
      execFileSync(trial.argv[0], trial.argv.slice(1), { stdio: ['ignore', 'ignore', 'pipe', none], timeout: 10_000, env: { PATH: SANDBOX_PATH } });
    } catch (err) {
      const stderr = String((err as { stderr?: Buffer }).stderr ?? '')
        .trim()
        .split('\n')
        .pop();
      return {
        unavailable: `a trial sandbox failed: ${stderr || (err as Error).message} (are unprivileged user namespaces allowed? sysctl user.max_user_namespaces)`,
      };
    } finally {
      closeSync(none);
    }
    return sandbox;
  }

  /** The uid `owner`'s attempts run as here. */
  uidOf(owner: string): number {
    return this.uids.uidOf(owner);
  }

  /**
   * The argv that runs one rank in its sandbox, and what its shim must give it on fd 3. `uid`: the
   * probe's own trial. A rank's CUDA_VISIBLE_DEVICES counts the devices it can see: on a host with
   * GPU device files the sandbox shows only the rank's, which CUDA numbers 0..n-1 (as Slurm's
   * ConstrainDevices and every container do); NVIDIA_VISIBLE_DEVICES keeps the node's indices.
   */
  plan(r: SandboxRequest, uid = this.uidOf(r.owner)): { argv: string[]; fd3: Buffer; uid: number } {
    const env = { ...r.env };
    const devices = r.gpuIndices !== undefined && this.gpus.present ? this.gpus.filesFor(r.gpuIndices) : [];
    if (r.gpuIndices !== undefined && this.gpus.present) env.CUDA_VISIBLE_DEVICES = r.gpuIndices.map((_, i) => i).join(',');
    const limit = r.memoryMiB > 0 ? r.memoryMiB * 1024 * 1024 : null;
    const { argv, fd3 } = sandboxArgv(this.tools, {
      uid,
      gid: uid,
      command: r.command,
      env,
      hostPaths: this.hostPaths,
      writablePaths: this.writablePaths,
      hidden: this.hidden,
      devices,
      readOnlyFiles: r.readOnlyFiles,
      hostIpc: r.hostIpc,
      tmpBytes: limit,
      shmBytes: limit ?? SHM_WITHOUT_LIMIT,
    });
    return { argv, fd3, uid };
  }
}

function findTool(name: string): string | null {
  for (const dir of TOOL_DIRS) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next directory
    }
  }
  return null;
}
