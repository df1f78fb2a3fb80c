import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ATTEMPT_END_REASONS, NO_IMAGE } from '@gantry/contracts';
import { AttemptCgroup, AttemptCgroups } from '../cgroups/attempt-cgroups';
import { ContainerRuntimeName, containerArgv, containerEnvFile, containerName, imagePlan } from '../containers/container-argv';
import { AttemptSandbox, SANDBOX_PATH } from '../sandbox/attempt-sandbox';
import { attemptPaths } from '../state/attempt-paths';
import { AttemptRef, Execution, ExecutionResult, ExecutionSpec, Executor } from './executor';
import { jobEnvironment } from './job-environment';
import { ShimExtras, parseShimStatus, shimArgv } from './attempt-shim';
import { isShimAlive, shimPid } from './shim-process';
import { SpawnedProcess, Spawner } from './spawner';

export interface ProcessExecutorOptions {
  /** Job logs (`<jobId>-<attempt>.log`) and large gangs' node-id files. */
  workdir: string;
  /** The agent's state directory: the shims' pid and status files (attempt-paths.ts). */
  stateDir: string;
  agentId: string;
  killGraceMs: number;
  /** Where attempts get a cgroup with their limits; null: they run without. */
  cgroups: AttemptCgroups | null;
  /** The node's container runtime, if it has one. */
  containerRuntime: ContainerRuntimeName | null;
  /** With `image` set and no runtime: run the command directly, or refuse (IMAGE_UNSUPPORTED). */
  imagePolicy: 'direct' | 'refuse';
  /** What starts the shims: SpawnHelper, or NodeSpawner (ADR 0032). */
  spawner: Spawner;
  /**
   * Runs attempts as their owners' unprivileged uids in namespaces of their own (ADR 0033); null
   * (GANTRY_AGENT_SANDBOX=off): they run as the agent's own user, with its environment's PATH and HOME.
   */
  sandbox: AttemptSandbox | null;
  logger: { warn(o: object, m: string): void };
}

/** Variables of the agent's own environment a container runtime client needs. */
const RUNTIME_ENV = ['PATH', 'HOME', 'XDG_RUNTIME_DIR', 'XDG_CONFIG_HOME', 'CONTAINER_HOST', 'CONTAINERS_CONF', 'DOCKER_HOST', 'DOCKER_CONFIG', 'TMPDIR'];
const RUNTIME_OWN = new Set(['PATH', 'HOME']);

function pick(env: NodeJS.ProcessEnv, names: string[]): Record<string, string> {
  return Object.fromEntries(names.filter((n) => env[n] !== undefined).map((n) => [n, env[n]!]));
}

/**
 * A stop within this long of an attempt's start sends its SIGTERM twice, the second after
 * TERM_AGAIN_MS: the first can land while the command is not yet there to get it (the shim has
 * forked it but it has not exec'd yet, or the sandbox's wrappers, which ignore TERM, are still
 * setting up) and would be lost until the grace's SIGKILL. Later stops send it once.
 */
const START_WINDOW_MS = 2_000;
const TERM_AGAIN_MS = 500;

/** How often an adopted attempt (not this process's child) is looked at, ms. */
const ADOPTED_POLL_MS = 500;

/**
 * Runs the job's command under the attempt shim (attempt-shim.ts): detached in its own session and
 * process group (stopping it signals everything it started), stdout and stderr straight to
 * `<workdir>/<jobId>-<attempt>.log`, the environment jobEnvironment gives it, in its own cgroup
 * with its limits where the node allows, or in its image when it names one and the node has a
 * container runtime. Nothing of the attempt depends on the agent process: an agent that restarts
 * takes it over with `resume`.
 */
export class ProcessExecutor implements Executor {
  constructor(private readonly o: ProcessExecutorOptions) {
    mkdirSync(o.workdir, { recursive: true });
  }

  start(spec: ExecutionSpec, onExit: (r: ExecutionResult) => void): Execution {
    const plan = imagePlan(spec.image, this.o.containerRuntime, this.o.imagePolicy, NO_IMAGE);
    if (plan.kind === 'refuse') {
      onExit({ exitCode: null, signal: null, stoppedFor: null, reason: ATTEMPT_END_REASONS.imageUnsupported });
      return { stop: () => undefined };
    }
    const sandbox = this.o.sandbox;
    const paths = attemptPaths(this.o.stateDir, spec.nodeId, spec.jobId, spec.attempt);
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    rmSync(paths.status, { force: true });
    const nodeIdsPath = join(this.o.workdir, `${spec.jobId}-${spec.attempt}.nodes`);
    // In a sandbox the agent's PATH and HOME may name what the job cannot see.
    const base = sandbox ? { path: SANDBOX_PATH, home: '/tmp' } : { path: process.env.PATH, home: process.env.HOME };
    const { env, nodeIdsFile } = jobEnvironment(spec, { ...base, nodeIdsPath });
    if (nodeIdsFile !== null) writeFileSync(nodeIdsPath, nodeIdsFile, { mode: 0o644 });
    const limits = { cpuCores: spec.cpuCores ?? 0, memoryMiB: spec.memoryMiB ?? 0 };
    const readOnlyFiles = nodeIdsFile !== null ? [nodeIdsPath] : [];
    let cgroup: AttemptCgroup | null = null;
    let command = spec.command;
    let container: { runtime: ContainerRuntimeName; name: string } | null = null;
    let childEnv = env;
    let extras: ShimExtras = {};
    if (plan.kind === 'container') {
      // The runtime gives the container a cgroup with the limits itself.
      container = { runtime: plan.runtime, name: containerName(this.o.agentId, spec.jobId, spec.attempt) };
      // The image's own PATH and HOME, unless the job sets them: the agent's mean nothing inside it.
      const inside = Object.fromEntries(Object.entries(env).filter(([k]) => !RUNTIME_OWN.has(k) || k in spec.env));
      writeFileSync(paths.fd3, containerEnvFile(inside), { mode: 0o600 });
      const uid = sandbox?.uidOf(spec.owner);
      const user = uid !== undefined ? { uid, gid: uid } : null;
      command = containerArgv({
        ...container,
        image: spec.image,
        command: spec.command,
        user,
        envFile: '/dev/fd/3',
        hostIpc: spec.hostIpc,
        gpuIndices: spec.gpuIndices,
        ...limits,
        mounts: readOnlyFiles,
      });
      // The runtime client runs with what it needs to find its storage or daemon, and nothing of the job's.
      childEnv = pick(process.env, RUNTIME_ENV);
      extras = { fd3File: paths.fd3 };
    } else {
      if (this.o.cgroups) {
        try {
          cgroup = this.o.cgroups.create(spec.jobId, spec.attempt, limits);
        } catch (err) {
          this.o.logger.warn({ err, jobId: spec.jobId, attempt: spec.attempt }, 'attempt cgroup not created; it runs without limits');
        }
      }
      if (sandbox) {
        const s = sandbox.plan({
          owner: spec.owner,
          command: spec.command,
          env,
          gpuIndices: spec.gpuIndices,
          hostIpc: spec.hostIpc,
          memoryMiB: limits.memoryMiB,
          readOnlyFiles,
        });
        writeFileSync(paths.fd3, s.fd3, { mode: 0o600 });
        command = s.argv;
        // The shim, setpriv and bwrap run as root: none of them sees the job's env (sandbox-argv.ts).
        childEnv = { PATH: SANDBOX_PATH };
        extras = { fd3File: paths.fd3, sandboxed: true };
      }
    }
    const { file, args } = shimArgv(paths.status, cgroup?.procsFiles ?? [], command, extras);
    let proc: SpawnedProcess;
    try {
      proc = this.o.spawner.spawn(file, args, { env: childEnv, logPath: join(this.o.workdir, `${spec.jobId}-${spec.attempt}.log`) });
    } catch (err) {
      cgroup?.remove();
      rmSync(paths.fd3, { force: true });
      throw err;
    }
    // Until the spawner says the pid (the helper answers later), the shim's pid file may.
    const watch = new Watch(this.o, paths, cgroup, container, onExit, () => proc.pid);
    proc.onSpawned(() => watch.spawned());
    proc.onError((err) => watch.end({ exitCode: null, signal: null, error: err.message }));
    proc.onExit((code, signal) => watch.end(watch.shimResult(code, signal)));
    // Its reaper died: watched as an adopted attempt from now on, after its shim had time to write its pid.
    proc.onLost(() => watchFromFiles(watch, paths, ADOPTED_POLL_MS));
    return watch;
  }

  resume(ref: AttemptRef, onExit: (r: ExecutionResult) => void): Execution {
    const paths = attemptPaths(this.o.stateDir, ref.nodeId, ref.jobId, ref.attempt);
    const cgroup = this.o.cgroups?.find(ref.jobId, ref.attempt) ?? null;
    const container = this.o.containerRuntime ? { runtime: this.o.containerRuntime, name: containerName(this.o.agentId, ref.jobId, ref.attempt) } : null;
    const watch = new Watch(this.o, paths, cgroup, container, onExit, () => null);
    watchFromFiles(watch, paths, 0);
    return watch;
  }
}

/**
 * Watches an attempt whose shim is not this process's child through its files: ended when its
 * status is written, or when its pid is gone (or was never written) without one. First look after
 * `firstLookMs` (0: as soon as the caller has returned), then every ADOPTED_POLL_MS.
 */
function watchFromFiles(watch: Watch, paths: { status: string; pid: string }, firstLookMs: number): void {
  const look = () => {
    const status = readStatus(paths.status);
    if (status) return watch.end(status);
    const pid = shimPid(paths.pid);
    if (pid !== null && isShimAlive(pid, paths.status)) return;
    // Gone: it may have written its status between the two looks.
    watch.end(readStatus(paths.status) ?? { exitCode: null, signal: null, reason: ATTEMPT_END_REASONS.exitUnknown });
  };
  const first = setTimeout(look, firstLookMs);
  const timer = setInterval(look, ADOPTED_POLL_MS);
  timer.unref();
  watch.onEnd = () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}

function readStatus(path: string): Omit<ExecutionResult, 'stoppedFor'> | null {
  try {
    return parseShimStatus(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

/** One attempt being watched: its stop, and its end (read once, reported once, cleaned up). */
class Watch implements Execution {
  private stoppedFor: string | null = null;
  private done = false;
  private readonly startedAt = Date.now();
  onEnd: () => void = () => undefined;

  constructor(
    private readonly o: ProcessExecutorOptions,
    private readonly paths: { status: string; pid: string; fd3: string },
    private readonly cgroup: AttemptCgroup | null,
    private readonly container: { runtime: ContainerRuntimeName; name: string } | null,
    private readonly onExit: (r: ExecutionResult) => void,
    /** The shim's pid while a spawner holds it (started, not yet reaped); null: only its pid file knows. */
    private readonly heldPid: () => number | null,
  ) {}

  /** The end of a shim this process started: what its status file says, else how the shim itself ended. */
  shimResult(code: number | null, signal: string | null): Omit<ExecutionResult, 'stoppedFor'> {
    return readStatus(this.paths.status) ?? { exitCode: code, signal };
  }

  /** Its pid became known: a stop that came before could not signal it, so it is sent now. */
  spawned(): void {
    if (this.stoppedFor !== null && !this.done) this.terminate();
  }

  end(r: Omit<ExecutionResult, 'stoppedFor'>): void {
    if (this.done) return;
    this.done = true;
    this.onEnd();
    const oom = this.cgroup?.oomKilled() ?? false;
    this.cgroup?.remove();
    this.onExit({ ...r, ...(oom ? { reason: ATTEMPT_END_REASONS.oomKilled } : {}), stoppedFor: this.stoppedFor });
    // Only now: the end is in the attempt's record (onExit saved it), the shim's files are no longer needed.
    rmSync(this.paths.status, { force: true });
    rmSync(this.paths.pid, { force: true });
    rmSync(this.paths.fd3, { force: true });
  }

  stop(reason: string, graceMs?: number): void {
    if (this.done) return;
    this.stoppedFor ??= reason;
    this.terminate();
    setTimeout(() => {
      if (this.done) return;
      this.signal('SIGKILL');
      // A container's processes are not in the shim's group (the runtime's monitor holds them).
      if (this.container) execFile(this.container.runtime, ['rm', '-f', this.container.name], () => undefined);
    }, graceMs ?? this.o.killGraceMs).unref();
  }

  private terminate(): void {
    this.signal('SIGTERM');
    if (Date.now() - this.startedAt < START_WINDOW_MS) {
      setTimeout(() => {
        if (!this.done) this.signal('SIGTERM');
      }, TERM_AGAIN_MS).unref();
    }
  }

  private signal(sig: NodeJS.Signals): void {
    // A held pid cannot have been reused (nobody has reaped it), and is signalled even while its
    // exec is under way (its command line is empty until the new program's is set up). One read
    // from the pid file is only signalled if its command line is still the shim's: never a group
    // that is not the shim's any more (a pid reused while the agent was down).
    let pid = this.heldPid();
    if (pid === null) {
      pid = shimPid(this.paths.pid);
      if (pid === null || !isShimAlive(pid, this.paths.status)) return;
    }
    try {
      process.kill(-pid, sig);
    } catch {
      // already gone
    }
  }
}
