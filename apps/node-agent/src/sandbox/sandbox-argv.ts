/** The programs that build an attempt's sandbox, as absolute paths found when the agent starts. */
export interface SandboxTools {
  setpriv: string;
  bwrap: string;
  env: string;
}

/** One attempt's sandbox (ADR 0033). */
export interface SandboxPlan {
  /** The unprivileged uid and gid it runs as (never 0, never the agent's). */
  uid: number;
  gid: number;
  command: string[];
  /** Its whole environment: nothing of the agent's environment reaches it. */
  env: Record<string, string>;
  /** Host paths it sees, read-only (those that exist). */
  hostPaths: string[];
  /** Host paths it may write (shared storage: scratch, datasets, checkpoints), as its uid; those that exist. */
  writablePaths: string[];
  /** Paths of the agent under a host path, covered by an empty directory. */
  hidden: string[];
  /** Device files it keeps (its GPUs and the driver's control devices); the rest of /dev is a minimal one of its own. */
  devices: string[];
  /** Files it reads at their host path (a large gang's node-ids file). */
  readOnlyFiles: string[];
  /** Share the node's IPC namespace and /dev/shm (queues' hostIpc) instead of its own. */
  hostIpc: boolean;
  /** Size of its own /tmp and /dev/shm (memory, charged to its cgroup where it has one), bytes; null: the kernel's default. */
  tmpBytes: number | null;
  shmBytes: number;
}

/** Signals the job must get with their default action: the wrapper ignores them (see sandboxArgv). */
const JOB_SIGNALS = 'TERM,INT,HUP';

/**
 * How the shim runs one attempt in its sandbox, and the arguments the sandbox reads from fd 3:
 * 1. setpriv drops from the agent's root to the attempt's uid and gid, with no supplementary
 *    groups and no way to gain privileges again (no_new_privs: setuid programs do not elevate);
 * 2. bwrap, as that uid, makes a user namespace and in it a PID, mount, IPC (unless hostIpc) and
 *    cgroup namespace: the job sees only its own processes (so it can signal nothing else), only
 *    the listed host paths (read-only, but for the writable ones, which it writes as its uid), its
 *    own /tmp, /dev and /dev/shm, and its device files; it cannot make further user namespaces; it
 *    dies with its shim. bwrap binds as the attempt's uid: a path that uid cannot reach on the host
 *    cannot be shown to it either;
 * 3. the environment is the job's alone (--clearenv, then one --setenv per variable, read from fd 3
 *    so that no value is on a command line), set only on the job's own process: the programs
 *    before it, which run as root, see none of it (LD_PRELOAD or PATH in a job's env reach nothing
 *    of the agent's);
 * 4. env(1) resets TERM, INT and HUP to their defaults and runs the command: the shim runs steps 1-2
 *    with those signals ignored, so a stop's SIGTERM to the attempt's process group reaches the job
 *    and is not taken by bwrap, whose death would SIGKILL the job at once (--die-with-parent) and
 *    cut its grace period short. The stop's SIGKILL still ends everything: bwrap dies, and the job's
 *    PID namespace with it, even processes that left the group.
 */
export function sandboxArgv(tools: SandboxTools, plan: SandboxPlan): { argv: string[]; fd3: Buffer } {
  const argv = [tools.setpriv, '--reuid', String(plan.uid), '--regid', String(plan.gid), '--clear-groups', '--no-new-privs', '--', tools.bwrap];
  argv.push('--unshare-user', '--unshare-pid', '--unshare-cgroup-try', '--disable-userns', '--die-with-parent');
  if (!plan.hostIpc) argv.push('--unshare-ipc');
  for (const p of plan.hostPaths) argv.push('--ro-bind', p, p);
  for (const p of plan.hidden) argv.push('--tmpfs', p);
  argv.push('--dev', '/dev', '--proc', '/proc');
  if (plan.tmpBytes !== null) argv.push('--size', String(plan.tmpBytes));
  argv.push('--tmpfs', '/tmp');
  if (plan.hostIpc) argv.push('--bind', '/dev/shm', '/dev/shm');
  else argv.push('--size', String(plan.shmBytes), '--tmpfs', '/dev/shm');
  // Last: a path, file or device under /tmp or /dev would be covered by the mounts above.
  for (const p of plan.writablePaths) argv.push('--bind', p, p);
  for (const d of plan.devices) argv.push('--dev-bind', d, d);
  for (const f of plan.readOnlyFiles) argv.push('--ro-bind', f, f);
  argv.push('--chdir', '/tmp', '--clearenv', '--args', '3', '--', tools.env, `--default-signal=${JOB_SIGNALS}`, '--', ...plan.command);
  const fd3: string[] = [];
  for (const [k, v] of Object.entries(plan.env)) fd3.push('--setenv', k, v);
  return { argv, fd3: Buffer.from(fd3.map((s) => `${s}\0`).join('')) };
}

/** Whether `path` is `root` or inside it. */
export function isWithin(path: string, root: string): boolean {
  const r = root.endsWith('/') ? root : `${root}/`;
  return path === root || path.startsWith(r);
}
