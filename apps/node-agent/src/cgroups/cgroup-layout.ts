import { join } from 'node:path';

/**
 * Where and how an attempt's cgroup is laid out, as pure functions (ADR 0020). The I/O is in
 * attempt-cgroups.ts.
 */
export type CgroupMount =
  /** cgroup v2: one unified hierarchy at `root`. */
  | { version: 2; root: string }
  /** cgroup v1: one hierarchy per controller. */
  | { version: 1; cpu: string; memory: string };

export interface CgroupLimits {
  /** CPU cores (fractions allowed); 0: no CPU limit. */
  cpuCores: number;
  /** Memory, MiB; 0: no memory limit. */
  memoryMiB: number;
}

/** The CFS period every quota is expressed in, µs (the kernel's default). */
export const CPU_PERIOD_US = 100_000;
/** The kernel's smallest CFS quota, µs. */
const CPU_QUOTA_MIN_US = 1_000;

/** A cgroup directory name made of what every filesystem and the shim's word-splitting accept. */
export function cgroupName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200) || '_';
}

/** The attempt's cgroup directories: `<hierarchy>/gantry/<agentId>/<jobId>-<attempt>` in each hierarchy it uses. */
export function attemptCgroupDirs(mount: CgroupMount, agentId: string, jobId: string, attempt: number): string[] {
  const rel = join('gantry', cgroupName(agentId), cgroupName(`${jobId}-${attempt}`));
  return mount.version === 2 ? [join(mount.root, rel)] : [join(mount.cpu, rel), join(mount.memory, rel)];
}

/** The parents to create (outermost first) and, under v2, to enable the cpu and memory controllers in. */
export function cgroupParents(mount: CgroupMount, agentId: string): string[] {
  return hierarchies(mount).flatMap((r) => [join(r, 'gantry'), join(r, 'gantry', cgroupName(agentId))]);
}

/** The agent's own cgroup in each hierarchy, which holds its attempts'. */
export function agentCgroupDirs(mount: CgroupMount, agentId: string): string[] {
  return hierarchies(mount).map((r) => join(r, 'gantry', cgroupName(agentId)));
}

function hierarchies(mount: CgroupMount): string[] {
  return mount.version === 2 ? [mount.root] : [mount.cpu, mount.memory];
}

/**
 * The files to write, in order, to set the limits: path relative to the attempt's directory
 * (under v1, the cpu files in the cpu hierarchy's and the memory ones in the memory hierarchy's).
 * CPU is a CFS quota of `cpuCores` periods; memory a hard limit with no swap beyond it, so going
 * over it is an OOM kill rather than slow swapping.
 */
export function limitWrites(mount: CgroupMount, limits: CgroupLimits): Array<{ controller: 'cpu' | 'memory'; file: string; value: string }> {
  const out: Array<{ controller: 'cpu' | 'memory'; file: string; value: string }> = [];
  if (limits.cpuCores > 0) {
    const quota = Math.max(CPU_QUOTA_MIN_US, Math.round(limits.cpuCores * CPU_PERIOD_US));
    if (mount.version === 2) out.push({ controller: 'cpu', file: 'cpu.max', value: `${quota} ${CPU_PERIOD_US}` });
    else
      out.push(
        { controller: 'cpu', file: 'cpu.cfs_period_us', value: String(CPU_PERIOD_US) },
        { controller: 'cpu', file: 'cpu.cfs_quota_us', value: String(quota) },
      );
  }
  if (limits.memoryMiB > 0) {
    const bytes = String(limits.memoryMiB * 1024 * 1024);
    if (mount.version === 2)
      out.push({ controller: 'memory', file: 'memory.max', value: bytes }, { controller: 'memory', file: 'memory.swap.max', value: '0' });
    // memsw (memory + swap) must not be below the memory limit, so it is written after it; absent where swap accounting is off.
    else
      out.push(
        { controller: 'memory', file: 'memory.limit_in_bytes', value: bytes },
        { controller: 'memory', file: 'memory.memsw.limit_in_bytes', value: bytes },
      );
  }
  return out;
}

/** The file whose counters say whether the kernel OOM-killed something in the cgroup, relative to its memory directory. */
export function oomEventsFile(mount: CgroupMount): string {
  return mount.version === 2 ? 'memory.events' : 'memory.oom_control';
}

/**
 * Whether that file says the kernel killed a process of the cgroup for memory: v2 `memory.events`
 * and v1 `memory.oom_control` (kernel 4.13+) both have an `oom_kill N` line; an older v1 kernel
 * has only `under_oom`, 1 while the cgroup is at its limit with the OOM killer about to act.
 */
export function oomKilled(eventsText: string): boolean {
  const counters = new Map(
    eventsText
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((p) => p.length === 2)
      .map(([k, v]) => [k, Number(v)]),
  );
  if (counters.has('oom_kill')) return counters.get('oom_kill')! > 0;
  return counters.get('under_oom') === 1;
}

/**
 * Which cgroup setup this host has, from /proc/self/mounts' lines: v2 when the unified hierarchy
 * is mounted at `root` itself; v1 when `cpu` and `memory` hierarchies are (a v1 host may also mount
 * an empty v2 at <root>/unified: it holds no controllers and is ignored). Null: neither.
 */
export function detectCgroupMount(mountsText: string, root = '/sys/fs/cgroup'): CgroupMount | null {
  const mounts = mountsText
    .split('\n')
    .map((l) => l.split(' '))
    .filter((p) => p.length >= 4);
  if (mounts.some(([, dir, type]) => type === 'cgroup2' && dir === root)) return { version: 2, root };
  const v1 = (controller: string) =>
    mounts.find(([, dir, type, opts]) => type === 'cgroup' && dir.startsWith(root) && opts.split(',').includes(controller))?.[1];
  const cpu = v1('cpu');
  const memory = v1('memory');
  return cpu && memory ? { version: 1, cpu, memory } : null;
}
