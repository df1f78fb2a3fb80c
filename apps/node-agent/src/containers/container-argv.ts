import { cgroupName } from '../cgroups/cgroup-layout';

export type ContainerRuntimeName = 'podman' | 'docker';

export interface ContainerRun {
  runtime: ContainerRuntimeName;
  /** Container name: unique per attempt and rank's node, so a restarted agent (or `podman rm -f`) can find it. */
  name: string;
  image: string;
  command: string[];
  env: Record<string, string>;
  /** The rank's GPU devices; absent: the RUN named none and the container gets none either. */
  gpuIndices?: number[];
  cpuCores: number;
  memoryMiB: number;
  /** Host directory mounted at the same path inside (the file GANTRY_NODE_IDS_FILE names). */
  mounts: string[];
}

/** The container name of one attempt of a job on one agent. */
export function containerName(agentId: string, jobId: string, attempt: number): string {
  return cgroupName(`gantry-${agentId}-${jobId}-${attempt}`).toLowerCase();
}

/**
 * The argv that runs one attempt in its image (ADR 0020), in the foreground so the shim records
 * its exit status like any command's:
 * - `--rm` (nothing left behind), `--init` (a PID 1 that reaps and forwards signals), the network
 *   and IPC namespaces of the host (a gang's ranks reach each other and MASTER_ADDR as the node's
 *   address; NCCL needs host IPC for shared memory);
 * - the env, each variable as `--env NAME` with the value taken from the runtime's own environment
 *   (the shim's), so no value is on a command line that `ps` shows;
 * - the limits as `--cpus` and `--memory` with `--memory-swap` equal (no swap): the runtime puts
 *   the container in a cgroup of its own with them;
 * - the GPUs: podman takes CDI names (`nvidia.com/gpu=<index>`, the NVIDIA container toolkit's
 *   generated spec), docker `--gpus "device=<indices>"`; NVIDIA_VISIBLE_DEVICES is in the env too.
 */
export function containerArgv(run: ContainerRun): string[] {
  const argv = [run.runtime, 'run', '--rm', '--init', '--name', run.name, '--network', 'host', '--ipc', 'host'];
  for (const k of Object.keys(run.env).sort()) argv.push('--env', k);
  if (run.cpuCores > 0) argv.push('--cpus', String(run.cpuCores));
  if (run.memoryMiB > 0) argv.push('--memory', `${run.memoryMiB}m`, '--memory-swap', `${run.memoryMiB}m`);
  if (run.gpuIndices && run.gpuIndices.length > 0) {
    if (run.runtime === 'podman') for (const i of run.gpuIndices) argv.push('--device', `nvidia.com/gpu=${i}`);
    else argv.push('--gpus', `"device=${run.gpuIndices.join(',')}"`);
  }
  for (const m of run.mounts) argv.push('--volume', `${m}:${m}:ro`);
  argv.push(run.image, ...run.command);
  return argv;
}

/** What the agent does with an attempt, given its image, the runtime found on the node and the image policy. */
export type ImagePlan = { kind: 'direct' } | { kind: 'container'; runtime: ContainerRuntimeName } | { kind: 'refuse' };

export function imagePlan(image: string, runtime: ContainerRuntimeName | null, policy: 'direct' | 'refuse', noImage: string): ImagePlan {
  if (image === noImage || image === '') return { kind: 'direct' };
  if (runtime) return { kind: 'container', runtime };
  return policy === 'refuse' ? { kind: 'refuse' } : { kind: 'direct' };
}
