import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@gantry/stack';
import { uniqueTag } from '@gantry/testing';
import { ExecutionResult, ExecutionSpec } from '../src/executors/executor';
import { NodeSpawner } from '../src/executors/node-spawner';
import { SpawnHelper } from '../src/executors/spawn-helper';
import { ProcessExecutor } from '../src/executors/process-executor';
import { Spawner } from '../src/executors/spawner';

/*
 * The two ways an agent starts an attempt's shim (ADR 0032), with real processes: what the started
 * process gets must not depend on which one did it; and what happens when the helper is not there
 * or dies.
 */

jest.setTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), 'gantry-spawn-int-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const quiet = { warn: () => undefined };

function run(
  spawner: Spawner,
  args: string[],
  env: Record<string, string>,
  logPath: string,
): Promise<{ code: number | null; signal: string | null; pid: number }> {
  return new Promise((resolve, reject) => {
    const p = spawner.spawn('/bin/sh', args, { env, logPath });
    p.onError(reject);
    p.onLost(() => reject(new Error('lost')));
    p.onExit((code, signal) => resolve({ code, signal, pid: p.pid! }));
  });
}

const helper = new SpawnHelper(quiet);
describe.each([
  ["Node's spawn", new NodeSpawner()],
  ['the spawn helper', helper],
] as const)('%s', (name, spawner) => {
  const tag = name.startsWith('Node') ? 'node' : 'helper';

  it('gives the process its argv, only the env it is given, stdin on /dev/null, output appended to the log, a session of its own, every signal at its default', async () => {
    const log = join(dir, `${tag}-props.log`);
    writeFileSync(log, 'before\n');
    const script = join(dir, 'show.sh');
    writeFileSync(
      script,
      [
        "printf 'argv='; tr '\\0' '|' < /proc/$$/cmdline; echo",
        "printf 'env='; env | sort | tr '\\n' '|'; echo",
        'echo to-stderr >&2',
        'read x; echo "read=$?"',
        // pid, process group, session: fields 1, 5 and 6 of stat.
        'echo "ids=$(cut -d\' \' -f1,5,6 /proc/$$/stat)"',
        // Read by the shell itself: with a child (grep) it would be waiting for, dash blocks every
        // signal for a moment around its sigsuspend, and the child could read that.
        'while read -r k v; do case $k in SigBlk:|SigIgn:) echo "$k $v";; esac; done < /proc/$$/status',
      ].join('\n') + '\n',
    );
    const r = await run(spawner, [script, 'arg one'], { PATH: process.env.PATH!, ONLY: 'this' }, log);
    expect(r).toMatchObject({ code: 0, signal: null });
    const lines = readFileSync(log, 'utf8').split('\n');
    expect(lines[0]).toBe('before');
    expect(lines[1]).toBe(`argv=/bin/sh|${script}|arg one|`);
    expect(lines[2]).toBe(`env=ONLY=this|PATH=${process.env.PATH}|PWD=${process.cwd()}|`);
    expect(lines.slice(3, 5)).toEqual(['to-stderr', 'read=1']);
    expect(lines[5]).toBe(`ids=${r.pid} ${r.pid} ${r.pid}`);
    // Python ignores SIGPIPE and SIGXFSZ for itself; a job must not inherit that.
    expect(lines.slice(6, 8)).toEqual(['SigBlk: 0000000000000000', 'SigIgn: 0000000000000000']);
  });

  it('reports an exit code, or the signal that ended it', async () => {
    const log = join(dir, `${tag}-exit.log`);
    expect(await run(spawner, ['-c', 'exit 3'], {}, log)).toMatchObject({ code: 3, signal: null });
    expect(await run(spawner, ['-c', 'kill -KILL $$'], {}, log)).toMatchObject({ code: null, signal: 'SIGKILL' });
  });

  it('refuses an argument or an environment value holding a NUL byte at once, and goes on', async () => {
    const log = join(dir, `${tag}-nul.log`);
    expect(() => spawner.spawn('/bin/sh', ['-c', 'a\0b'], { env: {}, logPath: log })).toThrow(/null bytes|NUL/);
    expect(() => spawner.spawn('/bin/sh', ['-c', 'true'], { env: { A: 'x\0y' }, logPath: log })).toThrow(/null bytes|NUL/);
    expect(await run(spawner, ['-c', 'exit 0'], {}, log)).toMatchObject({ code: 0, signal: null });
  });

  it('reports a program that cannot be started as an error', async () => {
    const p = spawner.spawn('/nonexistent/sh', [], { env: {}, logPath: join(dir, `${tag}-missing.log`) });
    const err = await new Promise<Error>((resolve) => p.onError(resolve));
    expect(err.message).toContain('ENOENT');
  });
});

describe('the spawn helper under ProcessExecutor', () => {
  const spec = (jobId: string, command: string[]): ExecutionSpec => ({
    nodeId: 'n1',
    jobId,
    attempt: 1,
    image: 'none',
    command,
    env: {},
    gang: { size: 1, rank: 0, nodeIds: ['n1'] },
    owner: 'alice',
    hostIpc: false,
  });
  // A long grace: a SIGTERM that was lost shows as the grace's SIGKILL, never as a slow machine's race with it.
  const executor = (spawner: Spawner) =>
    new ProcessExecutor({
      workdir: join(dir, 'work'),
      stateDir: join(dir, 'state'),
      agentId: uniqueTag('spawn'),
      killGraceMs: 15_000,
      cgroups: null,
      containerRuntime: null,
      imagePolicy: 'direct',
      spawner,
      sandbox: null,
      logger: quiet,
    });
  function ended(): { onExit: (r: ExecutionResult) => void; result: () => Promise<ExecutionResult> } {
    let got: ExecutionResult | null = null;
    return { onExit: (r) => (got = r), result: () => waitFor('the attempt to end', () => got ?? undefined, { timeoutMs: 30_000, intervalMs: 20 }) };
  }

  it('a stop that comes before the helper has answered with the pid still reaches the command, with SIGTERM', async () => {
    const e = ended();
    const x = executor(helper).start(spec('early-stop', ['sleep', '60']), e.onExit);
    x.stop('CANCELLED_BY_USER'); // the answer is a line on a pipe: it cannot have been read yet
    // Were the SIGTERM lost, the grace's SIGKILL would end it (signal SIGKILL), 15 s later.
    expect(await e.result()).toEqual({ exitCode: null, signal: 'SIGTERM', stoppedFor: 'CANCELLED_BY_USER' });
  });

  it("a stop signals the process its spawner holds even while its command line is not the shim's (an exec under way)", async () => {
    // What the executor sees for a moment after the pid is reported, made to last: the process is
    // ours (nobody has reaped it) but /proc shows another command line than the shim's.
    const other: Spawner = { spawn: (_file, _args, o) => new NodeSpawner().spawn('/bin/sh', ['-c', 'sleep 60; :'], o) };
    const e = ended();
    const x = executor(other).start(spec('exec-window', ['true']), e.onExit);
    x.stop('CANCELLED_BY_USER');
    // Checked against the command line, the SIGTERM would be skipped and the grace's SIGKILL end it.
    expect(await e.result()).toEqual({ exitCode: null, signal: 'SIGTERM', stoppedFor: 'CANCELLED_BY_USER' });
  });

  it("when the helper dies, what it started is still seen to end (from the shim's files), and later attempts start with Node's spawn", async () => {
    const warnings: object[] = [];
    const own = new SpawnHelper({ warn: (o) => warnings.push(o) });
    expect(await own.ready).toBe(true);
    const x = executor(own);
    const release = join(dir, uniqueTag('release'));
    const started = join(dir, uniqueTag('started'));
    const e1 = ended();
    x.start(spec('orphan', ['sh', '-c', `touch ${started}; while [ ! -e ${release} ]; do sleep 0.05; done; exit 4`]), e1.onExit);
    await waitFor('the command started', () => existsSync(started), { timeoutMs: 10_000, intervalMs: 20 });
    process.kill(own.pid!, 'SIGKILL');
    await waitFor('the helper gone', () => !own.active, { timeoutMs: 10_000, intervalMs: 20 });
    writeFileSync(release, '');
    expect(await e1.result()).toEqual({ exitCode: 4, signal: null, stoppedFor: null });
    const e2 = ended();
    x.start(spec('after', ['sh', '-c', 'exit 5']), e2.onExit);
    expect(await e2.result()).toEqual({ exitCode: 5, signal: null, stoppedFor: null });
    expect(warnings).toEqual([expect.objectContaining({ why: expect.stringContaining('SIGKILL') })]);
  });

  it('a request the helper cannot carry out ends that request only, never the helper', async () => {
    // Not something the agent sends: an argv entry that is not a string, as a bug could.
    const p = helper.spawn('/bin/sh', [{ not: 'a string' } as unknown as string], { env: {}, logPath: join(dir, 'bad-request.log') });
    const err = await new Promise<Error>((resolve, reject) => {
      p.onError(resolve);
      p.onLost(() => reject(new Error('the helper died of the request')));
    });
    expect(err.message).toContain('TypeError');
    expect(helper.active).toBe(true);
    expect(await run(helper, ['-c', 'exit 2'], {}, join(dir, 'bad-request.log'))).toMatchObject({ code: 2 });
  });

  it("where python3 cannot run, attempts start with Node's spawn and the agent says so once", async () => {
    const warnings: object[] = [];
    const none = new SpawnHelper({ warn: (o) => warnings.push(o) }, '/nonexistent/python3');
    const x = executor(none);
    const e = ended();
    x.start(spec('no-python', ['sh', '-c', 'exit 6']), e.onExit); // asked before it is known that the helper never comes
    expect(await e.result()).toEqual({ exitCode: 6, signal: null, stoppedFor: null });
    expect(await none.ready).toBe(false);
    expect(warnings).toEqual([expect.objectContaining({ why: expect.stringContaining('ENOENT') })]);
  });
});
