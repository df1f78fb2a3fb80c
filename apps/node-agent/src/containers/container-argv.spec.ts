import { ContainerRun, containerArgv, containerName, imagePlan } from './container-argv';

const run = (over: Partial<ContainerRun> = {}): ContainerRun => ({
  runtime: 'podman', name: 'gantry-a-job-1', image: 'registry/pytorch:24.05', command: ['python', 'train.py'],
  env: { RANK: '0', CUDA_VISIBLE_DEVICES: '2,3', NVIDIA_VISIBLE_DEVICES: '2,3' }, gpuIndices: [2, 3], cpuCores: 4, memoryMiB: 2048, mounts: [], ...over,
});

describe('containerArgv', () => {
  it.each<[string, Partial<ContainerRun>, string[]]>([
    ['podman: devices by CDI name, limits, env by name only', {}, [
      'podman', 'run', '--rm', '--init', '--name', 'gantry-a-job-1', '--network', 'host', '--ipc', 'host',
      '--env', 'CUDA_VISIBLE_DEVICES', '--env', 'NVIDIA_VISIBLE_DEVICES', '--env', 'RANK',
      '--cpus', '4', '--memory', '2048m', '--memory-swap', '2048m',
      '--device', 'nvidia.com/gpu=2', '--device', 'nvidia.com/gpu=3',
      'registry/pytorch:24.05', 'python', 'train.py',
    ]],
    ['docker: --gpus with the device list quoted for its CSV parser', { runtime: 'docker', env: {}, cpuCores: 0.5, memoryMiB: 0 }, [
      'docker', 'run', '--rm', '--init', '--name', 'gantry-a-job-1', '--network', 'host', '--ipc', 'host',
      '--cpus', '0.5', '--gpus', '"device=2,3"', 'registry/pytorch:24.05', 'python', 'train.py',
    ]],
    ['no GPUs, no limits, a node-ids file mounted read-only', { env: {}, gpuIndices: [], cpuCores: 0, memoryMiB: 0, mounts: ['/work/j-1.nodes'] }, [
      'podman', 'run', '--rm', '--init', '--name', 'gantry-a-job-1', '--network', 'host', '--ipc', 'host',
      '--volume', '/work/j-1.nodes:/work/j-1.nodes:ro', 'registry/pytorch:24.05', 'python', 'train.py',
    ]],
  ])('%s', (_n, over, argv) => {
    expect(containerArgv(run(over))).toEqual(argv);
  });

  it('never puts an env value on the command line', () => {
    const argv = containerArgv(run({ env: { SECRET: 's3cr3t-value' } }));
    expect(argv.join(' ')).not.toContain('s3cr3t-value');
    expect(argv).toContain('SECRET');
  });

  it('names a container after its agent, job and attempt, in what runtimes accept', () => {
    expect(containerName('Node A', '6f1c', 2)).toBe('gantry-node_a-6f1c-2');
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
