import {
  CgroupLimits,
  CgroupMount,
  agentCgroupDirs,
  attemptCgroupDirs,
  cgroupName,
  cgroupParents,
  detectCgroupMount,
  limitWrites,
  oomEventsFile,
  oomKilled,
} from './cgroup-layout';

const V2: CgroupMount = { version: 2, root: '/sys/fs/cgroup' };
const V1: CgroupMount = { version: 1, cpu: '/sys/fs/cgroup/cpu,cpuacct', memory: '/sys/fs/cgroup/memory' };

describe('cgroup layout', () => {
  it.each<[string, CgroupMount, string[]]>([
    ['v2: one directory in the unified hierarchy', V2, ['/sys/fs/cgroup/gantry/agent-1/job-7-2']],
    [
      'v1: one in the cpu hierarchy, one in the memory hierarchy',
      V1,
      ['/sys/fs/cgroup/cpu,cpuacct/gantry/agent-1/job-7-2', '/sys/fs/cgroup/memory/gantry/agent-1/job-7-2'],
    ],
  ])('%s', (_n, mount, dirs) => {
    expect(attemptCgroupDirs(mount, 'agent-1', 'job-7', 2)).toEqual(dirs);
  });

  it("creates the agent's parents outermost first, per hierarchy", () => {
    expect(cgroupParents(V2, 'a')).toEqual(['/sys/fs/cgroup/gantry', '/sys/fs/cgroup/gantry/a']);
    expect(cgroupParents(V1, 'a')).toHaveLength(4);
    expect(agentCgroupDirs(V1, 'a')).toEqual(['/sys/fs/cgroup/cpu,cpuacct/gantry/a', '/sys/fs/cgroup/memory/gantry/a']);
  });

  it.each([
    ['gpu-node-7.example', 'gpu-node-7.example'],
    ['a b/../c', 'a_b_.._c'],
    ['', '_'],
  ])('names %j as a safe directory %j', (s, name) => {
    expect(cgroupName(s)).toBe(name);
  });

  it.each<[string, CgroupMount, CgroupLimits, Array<[string, string]>]>([
    [
      'v2: 2 cores and 64 MiB, no swap',
      V2,
      { cpuCores: 2, memoryMiB: 64 },
      [
        ['cpu.max', '200000 100000'],
        ['memory.max', '67108864'],
        ['memory.swap.max', '0'],
      ],
    ],
    ['v2: half a core', V2, { cpuCores: 0.5, memoryMiB: 0 }, [['cpu.max', '50000 100000']]],
    ["v2: a tiny share is the kernel's least quota", V2, { cpuCores: 0.001, memoryMiB: 0 }, [['cpu.max', '1000 100000']]],
    [
      'v1: period, then quota; memory, then memory+swap at the same bytes',
      V1,
      { cpuCores: 1.5, memoryMiB: 1024 },
      [
        ['cpu.cfs_period_us', '100000'],
        ['cpu.cfs_quota_us', '150000'],
        ['memory.limit_in_bytes', '1073741824'],
        ['memory.memsw.limit_in_bytes', '1073741824'],
      ],
    ],
    ['no limits asked: nothing written', V2, { cpuCores: 0, memoryMiB: 0 }, []],
  ])('%s', (_n, mount, limits, writes) => {
    expect(limitWrites(mount, limits).map((w) => [w.file, w.value])).toEqual(writes);
  });

  it.each<[string, CgroupMount, string, boolean]>([
    ['v2 with an OOM kill', V2, 'low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n', true],
    ['v2 at its limit but nothing killed', V2, 'low 0\nhigh 0\nmax 3\noom 0\noom_kill 0\n', false],
    ['v1 (4.13+) with a kill', V1, 'oom_kill_disable 0\nunder_oom 0\noom_kill 2\n', true],
    ['v1 (4.13+) without', V1, 'oom_kill_disable 0\nunder_oom 0\noom_kill 0\n', false],
    ['an older v1 kernel, under OOM', V1, 'oom_kill_disable 0\nunder_oom 1\n', true],
    ['an older v1 kernel, fine', V1, 'oom_kill_disable 0\nunder_oom 0\n', false],
    ['an empty file', V2, '', false],
  ])('says whether the kernel OOM-killed: %s', (_n, mount, text, killed) => {
    expect(oomEventsFile(mount)).toBe(mount.version === 2 ? 'memory.events' : 'memory.oom_control');
    expect(oomKilled(text)).toBe(killed);
  });

  const v1Host = [
    'tmpfs /sys/fs/cgroup tmpfs rw,relatime,mode=755 0 0',
    'cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0',
    'cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0',
    'cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0',
    'cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0',
  ].join('\n');
  it.each<[string, string, CgroupMount | null]>([
    ['v1 with an empty unified hierarchy beside (this test machine)', v1Host, { version: 1, cpu: '/sys/fs/cgroup/cpu', memory: '/sys/fs/cgroup/memory' }],
    [
      'v1 with cpu and cpuacct together',
      'cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\ncgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0',
      { version: 1, cpu: '/sys/fs/cgroup/cpu,cpuacct', memory: '/sys/fs/cgroup/memory' },
    ],
    ['v2 (current GPU nodes)', 'cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime,nsdelegate 0 0', V2],
    ['v1 without a memory hierarchy', 'cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0', null],
    ['no cgroups at all', 'proc /proc proc rw 0 0', null],
  ])('detects %s', (_n, mounts, expected) => {
    expect(detectCgroupMount(mounts)).toEqual(expected);
  });
});
