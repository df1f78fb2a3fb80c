import { isWithin, sandboxArgv, SandboxPlan } from './sandbox-argv';

const tools = { setpriv: '/usr/bin/setpriv', bwrap: '/usr/bin/bwrap', env: '/usr/bin/env' };
const plan = (over: Partial<SandboxPlan> = {}): SandboxPlan => ({
  uid: 200001,
  gid: 200001,
  command: ['python', 'train.py'],
  env: { A: '1', SECRET: 's3cr3t value' },
  hostPaths: ['/usr', '/etc'],
  writablePaths: [],
  hidden: [],
  devices: [],
  readOnlyFiles: [],
  hostIpc: false,
  tmpBytes: 1 << 30,
  shmBytes: 1 << 30,
  ...over,
});
const pairs = (argv: string[], flag: string) => argv.flatMap((a, i) => (a === flag ? [argv[i + 1]] : []));

describe('sandboxArgv', () => {
  it('drops to the uid first, then builds the namespaces, then runs the command last', () => {
    const { argv } = sandboxArgv(tools, plan());
    expect(argv.slice(0, 8)).toEqual(['/usr/bin/setpriv', '--reuid', '200001', '--regid', '200001', '--clear-groups', '--no-new-privs', '--']);
    expect(argv[8]).toBe('/usr/bin/bwrap');
    expect(argv).toEqual(expect.arrayContaining(['--unshare-user', '--unshare-pid', '--unshare-ipc', '--disable-userns', '--die-with-parent', '--clearenv']));
    expect(argv.slice(-5)).toEqual(['/usr/bin/env', '--default-signal=TERM,INT,HUP', '--', 'python', 'train.py']);
  });

  it('puts no env value on the command line: they go to fd 3 as NUL-separated --setenv arguments', () => {
    const { argv, fd3 } = sandboxArgv(tools, plan());
    expect(argv.join(' ')).not.toContain('s3cr3t');
    expect(pairs(argv, '--args')).toEqual(['3']);
    expect(fd3.toString().split('\0')).toEqual(['--setenv', 'A', '1', '--setenv', 'SECRET', 's3cr3t value', '']);
  });

  it('binds host paths read-only, hides agent paths after them, and keeps only the given devices', () => {
    const { argv } = sandboxArgv(tools, plan({ hidden: ['/etc/gantry'], devices: ['/dev/nvidiactl', '/dev/nvidia3'], readOnlyFiles: ['/w/j-1.nodes'] }));
    expect(pairs(argv, '--ro-bind')).toEqual(['/usr', '/etc', '/w/j-1.nodes']);
    expect(argv.indexOf('--tmpfs')).toBeGreaterThan(argv.lastIndexOf('/etc'));
    expect(pairs(argv, '--tmpfs')).toEqual(['/etc/gantry', '/tmp', '/dev/shm']);
    expect(pairs(argv, '--dev-bind')).toEqual(['/dev/nvidiactl', '/dev/nvidia3']);
    expect(argv).not.toContain('--bind');
  });

  it('binds writable paths read-write after its own /tmp, so one under /tmp is not covered by it', () => {
    const { argv } = sandboxArgv(tools, plan({ writablePaths: ['/tmp/scratch', '/data'] }));
    expect(pairs(argv, '--bind')).toEqual(['/tmp/scratch', '/data']);
    expect(argv.indexOf('/tmp/scratch')).toBeGreaterThan(argv.indexOf('/tmp'));
  });

  it.each<[string, Partial<SandboxPlan>, { ipc: boolean; shm: string[]; sizes: string[] }]>([
    ['its own IPC and a sized /dev/shm', {}, { ipc: true, shm: ['--size', String(1 << 30), '--tmpfs', '/dev/shm'], sizes: [String(1 << 30), String(1 << 30)] }],
    ["the host's IPC for a queue that allows it", { hostIpc: true }, { ipc: false, shm: ['--bind', '/dev/shm', '/dev/shm'], sizes: [String(1 << 30)] }],
    [
      'no /tmp size without a memory limit',
      { tmpBytes: null, shmBytes: 64 << 20 },
      { ipc: true, shm: ['--size', String(64 << 20), '--tmpfs', '/dev/shm'], sizes: [String(64 << 20)] },
    ],
  ])('%s', (_n, over, expected) => {
    const { argv } = sandboxArgv(tools, plan(over));
    expect(argv.includes('--unshare-ipc')).toBe(expected.ipc);
    const i = argv.lastIndexOf('/dev/shm');
    expect(argv.slice(i + 1 - expected.shm.length, i + 1)).toEqual(expected.shm);
    expect(pairs(argv, '--size')).toEqual(expected.sizes);
  });
});

describe('isWithin', () => {
  it.each<[string, string, boolean]>([
    ['/etc/gantry/cred', '/etc', true],
    ['/etc', '/etc', true],
    ['/etcetera', '/etc', false],
    ['/var/lib/gantry', '/etc/', false],
  ])('%s in %s -> %p', (p, root, within) => {
    expect(isWithin(p, root)).toBe(within);
  });
});
