import { cgroupName } from '../cgroups/cgroup-layout';

export type ContainerRuntimeName = 'podman' | 'docker';

export interface ContainerRun {
  runtime: ContainerRuntimeName;
  /** Container name: unique per attempt and rank's node, so a restarted agent (or `podman rm -f`) can find it. */
  name: string;
  image: string;
  command: string[];
  /** The unprivileged uid and gid its processes run as (ADR 0033); null (GANTRY_AGENT_SANDBOX=off): the image's own user. */
  user: { uid: number; gid: number } | null;
  /** Where the runtime reads the job's env (containerEnvFile's text): the shim's fd 3, never the runtime's own environment. */
  envFile: string;
  /** Share the node's IPC namespace (queues' hostIpc); false: one of its own. */
  hostIpc: boolean;
  /** The rank's GPU devices; absent: the RUN named none and the container gets none either. */
  gpuIndices?: number[];
  cpuCores: number;
  memoryMiB: number;
  /** Host files mounted read-only at the same path inside (the file GANTRY_NODE_IDS_FILE names). */
  mounts: string[];
}

/** The container name of one attempt of a job on one agent. */
export function containerName(agentId: string, jobId: string, attempt: number): string {
  return cgroupName(`gantry-${agentId}-${jobId}-${attempt}`).toLowerCase();
}

/**
 * The argv that runs one attempt in its image (ADR 0020, 0033), in the foreground so the shim
 * records its exit status like any command's:
 * - `--rm` (nothing left behind), `--init` (a PID 1 that reaps and forwards signals), the host's
 *   network (a gang's ranks reach each other and MASTER_ADDR as the node's address), an IPC
 *   namespace of its own unless its queue allows the host's (NCCL's shared memory between ranks of
 *   one node needs it);
 * - as the owner's unprivileged uid, with every capability dropped and no way to gain privileges
 *   (`no-new-privileges`); never `--privileged`;
 * - the env from a file (`--env-file`, the shim's fd 3), so no value is on a command line and none
 *   is in the runtime client's own environment, which the job must not reach (a job's LD_PRELOAD
 *   would otherwise run in the root runtime client);
 * - the limits as `--cpus` and `--memory` with `--memory-swap` equal (no swap): the runtime puts
 *   the container in a cgroup of its own with them;
 * - the GPUs: podman takes CDI names (`nvidia.com/gpu=<index>`, the NVIDIA container toolkit's
 *   generated spec), docker `--gpus "device=<indices>"`; NVIDIA_VISIBLE_DEVICES is in the env too;
 * - `--` before the image: nothing a job sends is ever read as an option of the runtime.
 */
export function containerArgv(run: ContainerRun): string[] {
  const argv = [run.runtime, 'run', '--rm', '--init', '--name', run.name, '--network', 'host', '--ipc', run.hostIpc ? 'host' : 'private'];
  if (run.user) argv.push('--user', `${run.user.uid}:${run.user.gid}`);
  argv.push('--cap-drop', 'all', '--security-opt', 'no-new-privileges', '--env-file', run.envFile);
  if (run.cpuCores > 0) argv.push('--cpus', String(run.cpuCores));
  if (run.memoryMiB > 0) argv.push('--memory', `${run.memoryMiB}m`, '--memory-swap', `${run.memoryMiB}m`);
  if (run.gpuIndices && run.gpuIndices.length > 0) {
    if (run.runtime === 'podman') for (const i of run.gpuIndices) argv.push('--device', `nvidia.com/gpu=${i}`);
    else argv.push('--gpus', `"device=${run.gpuIndices.join(',')}"`);
  }
  for (const m of run.mounts) argv.push('--volume', `${m}:${m}:ro`);
  argv.push('--', run.image, ...run.command);
  return argv;
}

/**
 * The job's env as an env file: one `NAME=value` line each. Every line has its `=`: a bare name
 * would make the runtime copy that variable from its own environment. A value with a line break
 * cannot be written (the API refuses such an env for a job with an image); it throws.
 */
export function containerEnvFile(env: Record<string, string>): string {
  const broken = Object.entries(env)
    .filter(([, v]) => v.includes('\n') || v.includes('\r'))
    .map(([k]) => k);
  if (broken.length > 0) throw new Error(`env values with a line break cannot be given to a container: ${broken.join(', ')}`);
  return Object.entries(env)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
}

/** What the agent does with an attempt, given its image, the runtime found on the node and the image policy. */
export type ImagePlan = { kind: 'direct' } | { kind: 'container'; runtime: ContainerRuntimeName } | { kind: 'refuse' };

export function imagePlan(image: string, runtime: ContainerRuntimeName | null, policy: 'direct' | 'refuse', noImage: string): ImagePlan {
  if (image === noImage || image === '') return { kind: 'direct' };
  if (runtime) return { kind: 'container', runtime };
  return policy === 'refuse' ? { kind: 'refuse' } : { kind: 'direct' };
}
