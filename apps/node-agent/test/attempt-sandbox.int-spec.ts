import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@gantry/stack';
import { uniqueTag } from '@gantry/testing';
import { AttemptCgroups } from '../src/cgroups/attempt-cgroups';
import { ExecutionResult, ExecutionSpec } from '../src/executors/executor';
import { ProcessExecutor, ProcessExecutorOptions } from '../src/executors/process-executor';
import { SpawnHelper } from '../src/executors/spawn-helper';
import { AttemptSandbox } from '../src/sandbox/attempt-sandbox';
import { GpuDeviceFiles } from '../src/sandbox/gpu-device-files';
import { attemptPaths } from '../src/state/attempt-paths';

/*
 * Attempts in their sandbox (ADR 0033), with real processes on this machine as root (bubblewrap
 * from Debian, installed by the test set-up): each the unprivileged uid of its owner, in PID,
 * mount and IPC namespaces of its own, seeing none of the agent's files or environment.
 */

jest.setTimeout(60_000);

// Traversable by others, as the agent's work directory and /dev are: bwrap binds as the attempt's uid.
const dir = mkdtempSync(join(tmpdir(), 'gantry-sandbox-int-'));
chmodSync(dir, 0o755);
const stateDir = join(dir, 'state');
const workdir = join(dir, 'work');
// A host path jobs see (as /etc would be) holding the agent's credential: hidden all the same.
const hostShared = join(dir, 'host-shared');
const credentialDir = join(hostShared, 'gantry');
const SECRET = `agent-secret-${uniqueTag('s')}`;
mkdirSync(stateDir, { recursive: true, mode: 0o700 });
mkdirSync(workdir, { recursive: true });
mkdirSync(credentialDir, { recursive: true });
writeFileSync(join(credentialDir, 'node-credential'), SECRET, { mode: 0o644 });
writeFileSync(join(stateDir, 'agent-secret'), SECRET, { mode: 0o644 });
writeFileSync(join(workdir, 'other-attempt.log'), SECRET, { mode: 0o644 });
writeFileSync(join(hostShared, 'visible.txt'), 'visible');
// A fake driver: three "device files" (plain files stand in for them) and no /proc information.
const devRoot = join(dir, 'dev');
mkdirSync(devRoot);
for (const f of ['nvidiactl', 'nvidia0', 'nvidia1', 'nvidia2']) writeFileSync(join(devRoot, f), '');

const probed = AttemptSandbox.probe({
  hostPaths: ['/usr', '/bin', '/lib', '/lib64', '/etc', hostShared, '/nonexistent-path'],
  agentPaths: [stateDir, workdir, credentialDir],
  uidRange: { min: 210000, max: 210099 },
  stateDir,
  gpuDevices: new GpuDeviceFiles(devRoot, join(dir, 'no-proc')),
});
const sandbox = () => {
  if (!(probed instanceof AttemptSandbox)) throw new Error(`this test needs a sandbox: ${probed.unavailable}`);
  return probed;
};
const spawner = new SpawnHelper({ warn: () => undefined });
const options = (over: Partial<ProcessExecutorOptions> = {}): ProcessExecutorOptions => ({
  workdir,
  stateDir,
  agentId: uniqueTag('sbx'),
  killGraceMs: 2000,
  cgroups: null,
  containerRuntime: null,
  imagePolicy: 'direct',
  spawner,
  sandbox: sandbox(),
  logger: { warn: () => undefined },
  ...over,
});
const spec = (jobId: string, script: string, over: Partial<ExecutionSpec> = {}): ExecutionSpec => ({
  nodeId: 'n1',
  jobId,
  attempt: 1,
  image: 'none',
  command: ['sh', '-c', script],
  env: {},
  gang: { size: 1, rank: 0, nodeIds: ['n1'] },
  owner: 'alice',
  hostIpc: false,
  ...over,
});
const logOf = (jobId: string) => readFileSync(join(workdir, `${jobId}-1.log`), 'utf8');

function ended(): { onExit: (r: ExecutionResult) => void; result: () => Promise<ExecutionResult> } {
  let got: ExecutionResult | null = null;
  return { onExit: (r) => (got = r), result: () => waitFor('the attempt to end', () => got ?? undefined, { timeoutMs: 30_000, intervalMs: 20 }) };
}

async function run(
  jobId: string,
  script: string,
  over: Partial<ExecutionSpec> = {},
  opts: Partial<ProcessExecutorOptions> = {},
): Promise<{ result: ExecutionResult; log: string }> {
  const e = ended();
  new ProcessExecutor(options(opts)).start(spec(jobId, script, over), e.onExit);
  const result = await e.result();
  return { result, log: logOf(jobId) };
}

/** Processes of `uid` on the host, by /proc. */
function processesOf(uid: number): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return statSync(`/proc/${p}`).uid === uid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an attempt in its sandbox', () => {
  it("runs as its owner's unprivileged uid: never 0, never the agent's, one per owner, kept across agent restarts", async () => {
    const a = await run('uid-a', 'id -u; id -G');
    const b = await run('uid-b', 'id -u', { owner: 'bob' });
    const again = await run('uid-a2', 'id -u');
    expect(a.result).toEqual({ exitCode: 0, signal: null, stoppedFor: null });
    const [uidA, groups] = a.log.trim().split('\n');
    expect(Number(uidA)).toBeGreaterThanOrEqual(210000);
    expect(Number(uidA)).not.toBe(process.getuid!());
    expect(groups).toBe(uidA); // no supplementary groups: its own gid only
    expect(Number(b.log.trim())).not.toBe(Number(uidA));
    expect(again.log.trim()).toBe(uidA);
    expect(JSON.parse(readFileSync(join(stateDir, 'owner-uids.json'), 'utf8'))).toMatchObject({ alice: Number(uidA), bob: Number(b.log.trim()) });
    expect(statSync(join(stateDir, 'owner-uids.json')).mode & 0o077).toBe(0);
  });

  it("reads no agent secret: not from /proc, not from the agent's files (even under a host path it sees), not from its env", async () => {
    process.env.GANTRY_TEST_AGENT_SECRET = SECRET;
    try {
      const probe = [
        'cat /proc/[0-9]*/environ 2>/dev/null | tr "\\0" "\\n"',
        'env',
        `cat ${credentialDir}/node-credential ${stateDir}/agent-secret ${workdir}/other-attempt.log 2>&1`,
        `ls -a ${credentialDir} ${stateDir} ${workdir} 2>&1`,
        `cat ${hostShared}/visible.txt`,
        'echo; ls /proc | grep -c "^[0-9]"',
      ].join('; ');
      const { result, log } = await run('secrets', probe, { env: { MINE: 'mine' } });
      expect(result.exitCode).toBe(0);
      expect(log).not.toContain(SECRET);
      expect(log).toContain('MINE=mine');
      expect(log).not.toContain('GANTRY_TEST_AGENT_SECRET');
      expect(log).toContain('visible'); // the host path itself is there, read-only
      // Its own processes only: the sandbox's init, the shell, and what it runs.
      expect(Number(log.trim().split('\n').at(-1))).toBeLessThanOrEqual(6);
    } finally {
      delete process.env.GANTRY_TEST_AGENT_SECRET;
    }
  });

  it('cannot see or signal the agent, nor write what it sees of the host', async () => {
    const { log } = await run(
      'signal',
      `kill -0 ${process.pid} 2>&1 && echo SIGNALLED; kill -TERM 1 2>&1; touch ${hostShared}/x 2>&1 || echo read-only; touch /tmp/mine && echo tmp-ok`,
    );
    expect(log).not.toContain('SIGNALLED');
    expect(log).toContain('read-only');
    expect(log).toContain('tmp-ok');
    expect(existsSync(join(hostShared, 'x'))).toBe(false);
  });

  it("keeps its env from the programs that build the sandbox, which run as root: a job's LD_PRELOAD or PATH reaches none of them", async () => {
    const e = ended();
    const x = new ProcessExecutor(options()).start(spec('env', 'sleep 30', { env: { JOB_ONLY: SECRET, LD_PRELOAD: '/nonexistent/evil.so' } }), e.onExit);
    const shim = await waitFor(
      'the shim pid',
      () => {
        const p = attemptPaths(stateDir, 'n1', 'env', 1).pid;
        return existsSync(p) ? Number(readFileSync(p, 'utf8')) : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 20 },
    );
    // The shim and every root process under it, on the host.
    const tree = (pid: number): number[] => {
      const kids = readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .filter((p) => {
          try {
            return readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')[1] === String(pid);
          } catch {
            return false;
          }
        })
        .map(Number);
      return [pid, ...kids.flatMap(tree)];
    };
    const root = await waitFor(
      'the job running under the shim',
      () => {
        const all = tree(shim);
        return all.some((p) => statSync(`/proc/${p}`).uid !== 0 && readFileSync(`/proc/${p}/cmdline`, 'utf8').startsWith('sleep')) ? all : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const environs = root.map((p) => ({ pid: p, uid: statSync(`/proc/${p}`).uid, env: readFileSync(`/proc/${p}/environ`, 'utf8') }));
    for (const p of environs.filter((x) => x.uid === 0)) expect(p.env).not.toContain('JOB_ONLY');
    expect(environs.filter((p) => p.uid !== 0).some((p) => p.env.includes(`JOB_ONLY=${SECRET}`))).toBe(true);
    x.stop('TEST_DONE');
    await e.result();
  });

  it('is stopped gracefully: the SIGTERM reaches the job, which ends in its own time within the grace', async () => {
    const e = ended();
    const x = new ProcessExecutor(options({ killGraceMs: 20_000 })).start(
      spec('graceful', `trap 'sleep 1; echo bye; exit 42' TERM; echo ready; while :; do sleep 0.1; done`),
      e.onExit,
    );
    // Up once its trap is set (a stop during the sandbox's set-up waits for the SIGKILL, as a stop before the command starts always did).
    await waitFor('the job ready', () => (existsSync(join(workdir, 'graceful-1.log')) && logOf('graceful').includes('ready')) || undefined, {
      timeoutMs: 10_000,
      intervalMs: 20,
    });
    const t0 = Date.now();
    x.stop('CANCELLED_BY_USER');
    expect(await e.result()).toEqual({ exitCode: 42, signal: null, stoppedFor: 'CANCELLED_BY_USER' });
    expect(Date.now() - t0).toBeLessThan(10_000); // its own exit, not the grace's SIGKILL
    expect(logOf('graceful')).toContain('bye');
  });

  it("is ended whole by the stop's SIGKILL, even processes that left its process group", async () => {
    const e = ended();
    const x = new ProcessExecutor(options({ killGraceMs: 300 })).start(
      spec('escape', `setsid sleep 1000 & trap '' TERM; while :; do sleep 0.1; done`, { owner: 'carol' }),
      e.onExit,
    );
    const uid = sandbox().uidOf('carol');
    await waitFor('the escaped sleep running', () => processesOf(uid).length >= 3 || undefined, { timeoutMs: 10_000, intervalMs: 50 });
    x.stop('CANCELLED_BY_USER');
    expect(await e.result()).toMatchObject({ stoppedFor: 'CANCELLED_BY_USER' });
    await waitFor('every process of the attempt gone', () => processesOf(uid).length === 0 || undefined, { timeoutMs: 10_000, intervalMs: 50 });
  });

  it("has its own /tmp, /dev/shm and IPC namespace, unless its queue allows the host's", async () => {
    const hostIpc = readlinkSync('/proc/self/ns/ipc');
    const mark = `gantry-shm-${uniqueTag('m')}`;
    const script = `readlink /proc/self/ns/ipc; echo x > /dev/shm/${mark} && echo wrote; df -k /dev/shm | tail -1`;
    const own = await run('ipc-own', script, { memoryMiB: 64 });
    const lines = own.log.trim().split('\n');
    expect(lines[0]).not.toBe(hostIpc);
    expect(lines[1]).toBe('wrote');
    expect(Number(lines[2].trim().split(/\s+/)[1])).toBe(64 * 1024); // sized by its memory
    expect(existsSync(`/dev/shm/${mark}`)).toBe(false);
    const shared = await run('ipc-host', script, { hostIpc: true });
    expect(shared.log.split('\n')[0]).toBe(hostIpc);
    expect(existsSync(`/dev/shm/${mark}`)).toBe(true);
    rmSync(`/dev/shm/${mark}`, { force: true });
  });

  it('keeps only its own GPU device files, and counts them from 0', async () => {
    const { log } = await run('gpus', `ls ${devRoot}; echo CUDA=$CUDA_VISIBLE_DEVICES NVIDIA=$NVIDIA_VISIBLE_DEVICES`, {
      gpuIndices: [1, 2],
      env: {},
    });
    expect(log.trim().split('\n')).toEqual(['nvidia1', 'nvidia2', 'nvidiactl', 'CUDA=0,1 NVIDIA=1,2']);
  });

  it('runs inside its cgroup with its limits: a memory hog is OOM_KILLED', async () => {
    const cgroups = AttemptCgroups.probe(uniqueTag('sbxcg'), '/sys/fs/cgroup');
    if (!(cgroups instanceof AttemptCgroups)) throw new Error(`this test needs writable cgroups: ${cgroups.unavailable}`);
    try {
      const hog = 'x=a; while :; do x="$x$x"; done';
      const { result } = await run('hog', hog, { memoryMiB: 64, cpuCores: 1 }, { cgroups });
      expect(result).toMatchObject({ reason: 'OOM_KILLED' });
    } finally {
      cgroups.removeIfEmpty();
    }
  });
});

describe('a host that cannot sandbox', () => {
  it('is told why: the trial sandbox fails and the probe says so', () => {
    // No host path at all: the sandbox has no env(1) to run its trial with.
    const none = AttemptSandbox.probe({
      hostPaths: [],
      agentPaths: [],
      uidRange: { min: 210100, max: 210199 },
      stateDir,
      gpuDevices: new GpuDeviceFiles(devRoot),
    });
    expect(none).toEqual({ unavailable: expect.stringMatching(/^a trial sandbox failed: .*env/) });
  });
});
