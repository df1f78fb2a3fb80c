import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@gantry/stack';
import { uniqueTag } from '@gantry/testing';
import { AttemptCgroups } from '../src/cgroups/attempt-cgroups';
import { attemptCgroupDirs } from '../src/cgroups/cgroup-layout';
import { SHIM_NAME, SHIM_SCRIPT, shimArgv } from '../src/executors/attempt-shim';
import { ExecutionResult, ExecutionSpec } from '../src/executors/executor';
import { SpawnHelper } from '../src/executors/spawn-helper';
import { ProcessExecutor, ProcessExecutorOptions } from '../src/executors/process-executor';
import { shimPid } from '../src/executors/shim-process';
import { attemptPaths } from '../src/state/attempt-paths';
import { AttemptRecord } from '../src/state/attempt-record';
import { FileAttemptStore } from '../src/state/file-attempt-store';

/*
 * The process executor with real processes on this machine (ADR 0020): the shim, its status file,
 * taking over an attempt another executor started, the PID-reuse guard, and per-attempt cgroups
 * (this machine mounts cgroup v1 with writable cpu and memory hierarchies, as root).
 */

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'gantry-exec-int-'));
const agentId = uniqueTag('exec');
// What a real agent starts its shims with by default (GANTRY_AGENT_SPAWN=helper); spawners.int-spec.ts compares it with Node's spawn.
const spawner = new SpawnHelper({ warn: () => undefined });
const options = (over: Partial<ProcessExecutorOptions> = {}): ProcessExecutorOptions => ({
  workdir: join(dir, 'work'),
  stateDir: join(dir, 'state'),
  agentId,
  killGraceMs: 1000,
  cgroups: null,
  containerRuntime: null,
  imagePolicy: 'direct',
  spawner,
  sandbox: null,
  logger: { warn: () => undefined },
  ...over,
});
const spec = (jobId: string, command: string[], over: Partial<ExecutionSpec> = {}): ExecutionSpec => ({
  nodeId: 'n1',
  jobId,
  attempt: 1,
  image: 'none',
  command,
  env: {},
  gang: { size: 1, rank: 0, nodeIds: ['n1'] },
  owner: 'alice',
  hostIpc: false,
  ...over,
});

function ended(): { onExit: (r: ExecutionResult) => void; result: () => Promise<ExecutionResult> } {
  let got: ExecutionResult | null = null;
  return {
    onExit: (r) => (got = r),
    result: () => waitFor('the attempt to end', () => got ?? undefined, { timeoutMs: 30_000, intervalMs: 20 }),
  };
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('ProcessExecutor', () => {
  it('runs the command with its output straight in the log file and reports its exit code', async () => {
    const e = ended();
    new ProcessExecutor(options()).start(spec('out', ['sh', '-c', 'echo to-stdout; echo to-stderr >&2; exit 3']), e.onExit);
    expect(await e.result()).toEqual({ exitCode: 3, signal: null, stoppedFor: null });
    expect(readFileSync(join(dir, 'work', 'out-1.log'), 'utf8')).toBe('to-stdout\nto-stderr\n');
    const p = attemptPaths(join(dir, 'state'), 'n1', 'out', 1);
    expect([existsSync(p.status), existsSync(p.pid)]).toEqual([false, false]); // cleaned up once reported
  });

  it('a stop signals the command; the shim outlives it and records the signal', async () => {
    const e = ended();
    const started = join(dir, 'stop.started');
    const x = new ProcessExecutor(options()).start(spec('stop', ['sh', '-c', `touch ${started}; exec sleep 30`]), e.onExit);
    await waitFor('the command started', () => existsSync(started), { timeoutMs: 10_000, intervalMs: 20 });
    x.stop('CANCELLED_BY_USER');
    expect(await e.result()).toEqual({ exitCode: null, signal: 'SIGTERM', stoppedFor: 'CANCELLED_BY_USER' });
  });

  it('a stop that comes after the shim started but before the command did: the command never runs', async () => {
    const p = attemptPaths(join(dir, 'state'), 'n1', 'early', 1);
    mkdirSync(p.dir, { recursive: true });
    const ran = join(dir, 'early.ran');
    // The shim as the agent starts it, but signalled by itself right after it wrote its pid (where a stop can first reach it).
    const script = SHIM_SCRIPT.replace('echo $$ > "$s.pid"; ', () => 'echo $$ > "$s.pid"; kill -TERM $$; ');
    expect(script).toContain('kill -TERM $$;');
    spawn('/bin/sh', ['-c', script, SHIM_NAME, p.status, '', '', '', 'touch', ran], { stdio: 'ignore' });
    await waitFor('its status', () => existsSync(p.status) && readFileSync(p.status, 'utf8').trim() === '143', { timeoutMs: 10_000, intervalMs: 20 });
    expect(existsSync(ran)).toBe(false);
  });

  it('an agent started later takes over an attempt whose shim still runs and sees it end', async () => {
    // The shim started as the earlier agent process would have (detached, output to its log), by no executor of this process.
    const release = join(dir, uniqueTag('release'));
    const p = attemptPaths(join(dir, 'state'), 'n1', 'adopt', 1);
    mkdirSync(p.dir, { recursive: true });
    const { file, args } = shimArgv(p.status, [], ['sh', '-c', `while [ ! -e ${release} ]; do sleep 0.05; done; exit 4`]);
    spawn(file, args, { detached: true, stdio: 'ignore' }).unref();
    // Its pid written, not just its pid file created: `echo $$ >` opens the file before it writes.
    await waitFor('the shim started', () => shimPid(p.pid) !== null, { timeoutMs: 10_000, intervalMs: 20 });
    const e = ended();
    new ProcessExecutor(options()).resume({ nodeId: 'n1', jobId: 'adopt', attempt: 1 }, e.onExit);
    await new Promise((r) => setTimeout(r, 700)); // over one poll: still running, not reported
    writeFileSync(release, '');
    expect(await e.result()).toEqual({ exitCode: 4, signal: null, stoppedFor: null });
  });

  it('a stop of an adopted attempt signals its group', async () => {
    const p = attemptPaths(join(dir, 'state'), 'n1', 'adopt-stop', 1);
    mkdirSync(p.dir, { recursive: true });
    const started = join(dir, 'adopt-stop.started');
    const { file, args } = shimArgv(p.status, [], ['sh', '-c', `touch ${started}; exec sleep 30`]);
    spawn(file, args, { detached: true, stdio: 'ignore' }).unref();
    // The command itself running, not only the shim: a stop between the shim's check for an earlier
    // stop and its start of the command is the start race (the test above, and the shim's note), which
    // a loaded machine hit here once the test stopped right after the shim wrote its pid.
    await waitFor('the command started', () => existsSync(started) && shimPid(p.pid) !== null, { timeoutMs: 10_000, intervalMs: 20 });
    const e = ended();
    new ProcessExecutor(options()).resume({ nodeId: 'n1', jobId: 'adopt-stop', attempt: 1 }, e.onExit).stop('CANCELLED_BY_USER');
    expect(await e.result()).toEqual({ exitCode: null, signal: 'SIGTERM', stoppedFor: 'CANCELLED_BY_USER' });
  });

  it('an attempt that ended while no agent watched is reported from its status file', async () => {
    const p = attemptPaths(join(dir, 'state'), 'n1', 'gone', 1);
    mkdirSync(p.dir, { recursive: true });
    writeFileSync(p.status, '0\n');
    const e = ended();
    new ProcessExecutor(options()).resume({ nodeId: 'n1', jobId: 'gone', attempt: 1 }, e.onExit);
    expect(await e.result()).toEqual({ exitCode: 0, signal: null, stoppedFor: null });
  });

  it('never adopts nor signals a pid that is not the shim any more (reused), and says the exit is unknown', async () => {
    const p = attemptPaths(join(dir, 'state'), 'n1', 'reused', 1);
    mkdirSync(p.dir, { recursive: true });
    // A live process group leader that is not this attempt's shim: what its pid now names.
    const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    const gone = new Promise((r) => stranger.once('exit', r));
    try {
      writeFileSync(p.pid, String(stranger.pid));
      const e = ended();
      const x = new ProcessExecutor(options()).resume({ nodeId: 'n1', jobId: 'reused', attempt: 1 }, e.onExit);
      x.stop('CANCELLED_BY_USER');
      expect(await e.result()).toEqual({ exitCode: null, signal: null, stoppedFor: 'CANCELLED_BY_USER', reason: 'EXIT_UNKNOWN' });
      expect(stranger.exitCode === null && stranger.signalCode === null).toBe(true); // never signalled
    } finally {
      stranger.kill('SIGKILL');
      await gone;
    }
  });

  it('refuses a job with an image on a node without a container runtime when the policy says so', async () => {
    const e = ended();
    new ProcessExecutor(options({ imagePolicy: 'refuse' })).start(spec('img', ['true'], { image: 'registry/pytorch:24.05' }), e.onExit);
    expect(await e.result()).toMatchObject({ reason: 'IMAGE_UNSUPPORTED' });
  });

  it('runs a job with an image through the container runtime: its argv, and its env from a file on fd 3, never its own environment', async () => {
    // A stand-in `podman` first on PATH: records its arguments, the env file it was given, and what its own environment says of the job's variables; exits 7.
    const bin = join(dir, 'fake-runtime');
    mkdirSync(bin, { recursive: true });
    const seen = join(dir, 'podman-argv.txt');
    writeFileSync(
      join(bin, 'podman'),
      `#!/bin/sh\nprintf '%s\\n' "$@" > '${seen}'\ncat /dev/fd/3 >> '${seen}'\necho "own env: SECRET=$SECRET RANK=$RANK" >> '${seen}'\nexit 7\n`,
      { mode: 0o755 },
    );
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      const e = ended();
      new ProcessExecutor(options({ containerRuntime: 'podman' })).start(
        spec('boxed', ['python', 'train.py'], {
          image: 'registry.example/pytorch:24.05',
          env: { SECRET: 'v4lue' },
          gpuIndices: [1],
          cpuCores: 2,
          memoryMiB: 512,
        }),
        e.onExit,
      );
      expect(await e.result()).toEqual({ exitCode: 7, signal: null, stoppedFor: null });
    } finally {
      process.env.PATH = path;
    }
    const lines = readFileSync(seen, 'utf8').trim().split('\n');
    const image = lines.indexOf('registry.example/pytorch:24.05');
    expect(lines.slice(0, 9)).toEqual([
      'run',
      '--rm',
      '--init',
      '--name',
      expect.stringMatching(/^gantry-.*-boxed-1$/),
      '--network',
      'host',
      '--ipc',
      'private',
    ]);
    expect(lines).toEqual(
      expect.arrayContaining(['--cpus', '2', '--memory', '512m', '--device', 'nvidia.com/gpu=1', '--env-file', '/dev/fd/3', '--cap-drop', 'all']),
    );
    expect(lines.slice(image - 1, image + 3)).toEqual(['--', 'registry.example/pytorch:24.05', 'python', 'train.py']);
    expect(lines.slice(0, image + 3).join(' ')).not.toContain('v4lue');
    // The file: the job's variables and the agent's (the image's own PATH: no PATH line).
    const file = lines.slice(image + 3, -1);
    expect(file).toEqual(expect.arrayContaining(['SECRET=v4lue', 'RANK=0', 'GANTRY_JOB_ID=boxed']));
    expect(file.some((l) => l.startsWith('PATH='))).toBe(false);
    expect(lines.at(-1)).toBe('own env: SECRET= RANK=');
    expect(existsSync(attemptPaths(join(dir, 'state'), 'n1', 'boxed', 1).fd3)).toBe(false); // deleted once it ended
  });

  it('keeps attempt records as files that survive the store, and skips one that is not a record', () => {
    const stateDir = join(dir, 'records');
    const warnings: object[] = [];
    const store = new FileAttemptStore(stateDir, { warn: (o) => warnings.push(o) });
    const rec = (jobId: string, startedAt: number): AttemptRecord => ({ v: 1, nodeId: 'node/1', jobId, attempt: 1, gpus: 0, trace: {}, startedAt });
    store.save(rec('b', 2));
    store.save(rec('a', 1));
    store.save({ ...rec('b', 2), stoppedFor: 'CANCELLED_BY_USER' });
    writeFileSync(join(stateDir, 'attempts', encodeURIComponent('node/1'), 'torn.json'), '{"v":1,');
    const again = new FileAttemptStore(stateDir, { warn: () => undefined });
    expect(again.load('node/1').map((r) => [r.jobId, r.stoppedFor])).toEqual([
      ['a', undefined],
      ['b', 'CANCELLED_BY_USER'],
    ]);
    again.remove(rec('a', 1));
    expect(new FileAttemptStore(stateDir, { warn: (o) => warnings.push(o) }).load('node/1').map((r) => r.jobId)).toEqual(['b']);
    expect(warnings.length).toBeGreaterThan(0);
    expect(again.load('another-node')).toEqual([]);
  });

  describe('with per-attempt cgroups (this machine: v1, writable)', () => {
    const probed = AttemptCgroups.probe(agentId, '/sys/fs/cgroup');
    afterAll(() => (probed instanceof AttemptCgroups ? probed.removeIfEmpty() : undefined));
    const cgroups = () => {
      if (!(probed instanceof AttemptCgroups)) throw new Error(`this test needs writable cgroups: ${probed.unavailable}`);
      return probed;
    };

    it('ends a memory hog over its memoryMiB as OOM_KILLED and removes its cgroup', async () => {
      const e = ended();
      const hog = ['node', '-e', 'const a = []; for (;;) a.push(Buffer.alloc(8 << 20, 1));'];
      new ProcessExecutor(options({ cgroups: cgroups() })).start(spec('hog', hog, { memoryMiB: 64, cpuCores: 1 }), e.onExit);
      expect(await e.result()).toMatchObject({ reason: 'OOM_KILLED', stoppedFor: null });
      const dirs = attemptCgroupDirs(cgroups().mount, agentId, 'hog', 1);
      await waitFor('its cgroup removed', () => dirs.every((d) => !existsSync(d)), { timeoutMs: 5_000, intervalMs: 50 });
    });

    it('runs the command inside its cgroup with its CPU quota and memory limit', async () => {
      const e = ended();
      const out = join(dir, 'limits.txt');
      const [cpuDir, memoryDir] = attemptCgroupDirs(cgroups().mount, agentId, 'limits', 1);
      const show = `cat /proc/self/cgroup > ${out}; cat ${cpuDir}/cpu.cfs_quota_us ${memoryDir}/memory.limit_in_bytes >> ${out}`;
      new ProcessExecutor(options({ cgroups: cgroups() })).start(spec('limits', ['sh', '-c', show], { memoryMiB: 128, cpuCores: 0.5 }), e.onExit);
      expect(await e.result()).toMatchObject({ exitCode: 0 });
      const text = readFileSync(out, 'utf8');
      expect(text).toContain(`memory:/gantry/${agentId}/limits-1`);
      expect(text).toMatch(/^50000\n134217728\n/m);
    });

    it("a job that asks for no limits still gets a cgroup of its own (out of the agent's), without limits", async () => {
      const e = ended();
      const out = join(dir, 'free.txt');
      new ProcessExecutor(options({ cgroups: cgroups() })).start(
        spec('free', ['sh', '-c', `cat /proc/self/cgroup > ${out}`], { memoryMiB: 0, cpuCores: 0 }),
        e.onExit,
      );
      expect(await e.result()).toEqual({ exitCode: 0, signal: null, stoppedFor: null });
      expect(readFileSync(out, 'utf8')).toContain(`memory:/gantry/${agentId}/free-1`);
    });
  });
});
