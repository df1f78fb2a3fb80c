import { ContainerRun, containerArgv, containerEnvFile, containerName, imagePlan } from './container-argv';

const run = (over: Partial<ContainerRun> = {}): ContainerRun => ({
  runtime: 'podman',
  name: 'gantry-a-job-1',
  image: 'registry/pytorch:24.05',
  command: ['python', 'train.py'],
  user: { uid: 200001, gid: 200001 },
  envFile: '/dev/fd/3',
  hostIpc: false,
  gpuIndices: [2, 3],
  cpuCores: 4,
  memoryMiB: 2048,
  mounts: [],
  ...over,
});
const TENANT = ['--user', '200001:200001', '--cap-drop', 'all', '--security-opt', 'no-new-privileges', '--env-file', '/dev/fd/3'];

describe('containerArgv', () => {
  it.each<[string, Partial<ContainerRun>, string[]]>([
    [
      'podman: devices by CDI name, limits, its own IPC',
      {},
      [
        'podman',
        'run',
        '--rm',
        '--init',
        '--name',
        'gantry-a-job-1',
        '--network',
        'host',
        '--ipc',
        'private',
        ...TENANT,
        '--cpus',
        '4',
        '--memory',
        '2048m',
        '--memory-swap',
        '2048m',
        '--device',
        'nvidia.com/gpu=2',
        '--device',
        'nvidia.com/gpu=3',
        '--',
        'registry/pytorch:24.05',
        'python',
        'train.py',
      ],
    ],
    [
      'docker: --gpus with the device list quoted for its CSV parser',
      { runtime: 'docker', cpuCores: 0.5, memoryMiB: 0 },
      [
        'docker',
        'run',
        '--rm',
        '--init',
        '--name',
        'gantry-a-job-1',
        '--network',
        'host',
        '--ipc',
        'private',
        ...TENANT,
        '--cpus',
        '0.5',
        '--gpus',
        '"device=2,3"',
        '--',
        'registry/pytorch:24.05',
        'python',
        'train.py',
      ],
    ],
    [
      "a queue with the host's IPC, no GPUs, no limits, a node-ids file mounted read-only",
      { hostIpc: true, gpuIndices: [], cpuCores: 0, memoryMiB: 0, mounts: ['/work/j-1.nodes'] },
      [
        'podman',
        'run',
        '--rm',
        '--init',
        '--name',
        'gantry-a-job-1',
        '--network',
        'host',
        '--ipc',
        'host',
        ...TENANT,
        '--volume',
        '/work/j-1.nodes:/work/j-1.nodes:ro',
        '--',
        'registry/pytorch:24.05',
        'python',
        'train.py',
      ],
    ],
  ])('%s', (_n, over, argv) => {
    expect(containerArgv(run(over))).toEqual(argv);
  });

  it('ends the options before the image: an image or command that looks like an option is only ever an image or a command', () => {
    const argv = containerArgv(run({ image: '--privileged', command: ['--volume=/:/host'] }));
    expect(argv.indexOf('--')).toBe(argv.indexOf('--privileged') - 1);
    expect(argv.filter((a) => a === '--privileged')).toHaveLength(1);
  });

  it('names a container after its agent, job and attempt, in what runtimes accept', () => {
    expect(containerName('Node A', '6f1c', 2)).toBe('gantry-node_a-6f1c-2');
  });
});

describe('containerEnvFile', () => {
  it('writes one NAME=value line per variable, values as they are', () => {
    expect(containerEnvFile({ A: '1', B: ' spaced = out ', C: '' })).toBe('A=1\nB= spaced = out \nC=\n');
  });

  it('refuses a value with a line break, naming it', () => {
    expect(() => containerEnvFile({ OK: 'x', SCRIPT: 'a\nb' })).toThrow(/SCRIPT/);
  });
});

describe('imagePlan', () => {
  it.each<[string, string, 'podman' | 'docker' | null, 'direct' | 'refuse', ReturnType<typeof imagePlan>]>([
    ['no image: direct whatever the policy', 'none', null, 'refuse', { kind: 'direct' }],
    ['no image, a runtime present: still direct', 'none', 'podman', 'direct', { kind: 'direct' }],
    ['an image and a runtime: in a container', 'registry/pytorch:24.05', 'podman', 'refuse', { kind: 'container', runtime: 'podman' }],
    ['an image, no runtime, policy direct', 'registry/pytorch:24.05', null, 'direct', { kind: 'direct' }],
    ['an image, no runtime, policy refuse', 'registry/pytorch:24.05', null, 'refuse', { kind: 'refuse' }],
  ])('%s', (_n, image, runtime, policy, plan) => {
    expect(imagePlan(image, runtime, policy, 'none')).toEqual(plan);
  });
});
