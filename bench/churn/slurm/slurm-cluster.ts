/**
 * A Slurm 22.05 cluster on this host for bench:churn-slurm: slurmctld and four slurmd (one per
 * node, `slurmd -N`), each node 8 GPUs, 32 CPUs and 256 GiB as configured (`config_overrides`: the
 * host's two cores are not what a node declares, as the Gantry agents' simulated nodes are not).
 * The GPUs are gres with placeholder device files: jobs get a GPU index and nothing checks the
 * device, as Gantry's agents here run `true` on simulated GPUs. Scheduling is Slurm's low-latency
 * setup the issue measured (backfill, `batch_sched_delay=0`, no `defer`); no accounting database,
 * no cgroups (proctrack/linuxproc, task/none), munge authentication as in any Slurm cluster.
 * Daemons run in the foreground as this process's children; their logs are kept in `logDir`.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '@gantry/stack';

export const SLURM_NODES = ['n1', 'n2', 'n3', 'n4'] as const;
const NODE_LIST = 'n[1-4]';
const GPUS_PER_NODE = 8;

export interface SlurmClusterOptions {
  /** slurmctld's port; the nodes' slurmd listen on the next four. */
  port: number;
  /** Where the daemons' logs go (kept after the run, as bench:churn keeps its services' logs). */
  logDir: string;
  say: (msg: string) => void;
}

export class SlurmCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'gantry-bench-slurm-'));
  readonly conf = join(this.dir, 'slurm.conf');
  /** Where every job writes its output (`<id>.out`). */
  readonly jobsDir = join(this.dir, 'jobs');
  private readonly daemons = new Map<string, ChildProcess>();
  private mungeStartedHere = false;

  constructor(private readonly o: SlurmClusterOptions) {}

  /** What every Slurm command of the bench runs with, on top of this process's environment. */
  get slurmEnv(): Record<string, string> {
    return { SLURM_CONF: this.conf, LC_ALL: 'C' };
  }

  private get env(): NodeJS.ProcessEnv {
    return { ...process.env, ...this.slurmEnv };
  }

  /** Pids by daemon name (`slurmctld`, `slurmd-n1`.., `munged`), for the CPU accounting. */
  pids(): Record<string, number | undefined> {
    const out: Record<string, number | undefined> = {};
    for (const [name, p] of this.daemons) out[name] = p.pid;
    const munged = readPid('/run/munge/munged.pid');
    if (munged) out.munged = munged;
    return out;
  }

  async start(): Promise<void> {
    this.writeConfig();
    this.ensureMunge();
    this.daemon('slurmctld', 'slurmctld', ['-D', '-i', '-f', this.conf]);
    for (const n of SLURM_NODES) this.daemon(`slurmd-${n}`, 'slurmd', ['-D', '-f', this.conf, '-N', n]);
    await waitFor(
      'four idle Slurm nodes',
      () => {
        const states = this.run('sinfo', ['-h', '-N', '-o', '%T']).split('\n').filter(Boolean);
        return states.length === SLURM_NODES.length && states.every((s) => s === 'idle');
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
  }

  /** Drained nodes take no new job (Gantry's cordon); resumed, they take work at once. */
  setDrained(drained: boolean): void {
    this.run('scontrol', ['update', `nodename=${NODE_LIST}`, drained ? 'state=drain' : 'state=resume', ...(drained ? ['reason=bench'] : [])]);
  }

  /** Cancels every job and waits until none is left. */
  async cancelAll(): Promise<void> {
    this.run('scancel', ['--partition=bench']);
    await waitFor('Slurm queue empty', () => this.run('squeue', ['-h', '-o', '%i']).trim() === '', { timeoutMs: 120_000, intervalMs: 250 });
  }

  run(cmd: string, args: string[]): string {
    return execFileSync(cmd, args, { env: this.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  async stop(): Promise<void> {
    for (const [name, p] of [...this.daemons].reverse()) {
      if (p.exitCode !== null || p.signalCode !== null) continue;
      const exited = new Promise((ok) => p.once('exit', ok));
      p.kill('SIGTERM');
      const t = setTimeout(() => p.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
      this.o.say(`${name} stopped`);
    }
    if (this.mungeStartedHere) {
      const pid = readPid('/run/munge/munged.pid');
      if (pid) process.kill(pid, 'SIGTERM');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private daemon(name: string, cmd: string, args: string[]): void {
    const p = spawn(cmd, args, { env: this.env, stdio: 'ignore' });
    p.once('exit', (code, signal) => {
      if (this.daemons.get(name) === p) this.o.say(`${name} exited (${signal ?? code})`);
    });
    this.daemons.set(name, p);
  }

  /** munged, started as the munge user when none answers (a host with Slurm has it running already). */
  private ensureMunge(): void {
    try {
      execFileSync('munge', ['-n'], { stdio: 'ignore' });
      return;
    } catch {
      // not running: start it below
    }
    mkdirSync('/run/munge', { recursive: true });
    execFileSync('chown', ['munge:munge', '/run/munge']);
    execFileSync('runuser', ['-u', 'munge', '--', 'munged']);
    this.mungeStartedHere = true;
    execFileSync('munge', ['-n'], { stdio: 'ignore' });
  }

  private writeConfig(): void {
    const host = hostname();
    const dev = join(this.dir, 'dev');
    mkdirSync(dev);
    mkdirSync(this.jobsDir);
    mkdirSync(this.o.logDir, { recursive: true });
    for (let i = 0; i < GPUS_PER_NODE; i++) writeFileSync(join(dev, `gpu${i}`), '');
    const nodes = SLURM_NODES.map(
      (n, i) =>
        `NodeName=${n} NodeHostname=${host} NodeAddr=127.0.0.1 Port=${this.o.port + 1 + i} CPUs=32 RealMemory=262144 Gres=gpu:${GPUS_PER_NODE} State=UNKNOWN`,
    );
    writeFileSync(
      this.conf,
      [
        'ClusterName=benchchurn',
        `SlurmctldHost=${host}(127.0.0.1)`,
        `SlurmctldPort=${this.o.port}`,
        'AuthType=auth/munge',
        'CredType=cred/munge',
        'SlurmUser=root',
        'SlurmdUser=root',
        `StateSaveLocation=${join(this.dir, 'state')}`,
        `SlurmdSpoolDir=${join(this.dir, 'spool-%n')}`,
        `SlurmctldPidFile=${join(this.dir, 'slurmctld.pid')}`,
        `SlurmdPidFile=${join(this.dir, 'slurmd-%n.pid')}`,
        `SlurmctldLogFile=${join(this.o.logDir, 'slurmctld.log')}`,
        `SlurmdLogFile=${join(this.o.logDir, 'slurmd-%n.log')}`,
        'SlurmctldDebug=info',
        'SlurmdDebug=info',
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'SelectType=select/cons_tres',
        'SelectTypeParameters=CR_CPU',
        'SchedulerType=sched/backfill',
        'SchedulerParameters=batch_sched_delay=0',
        'GresTypes=gpu',
        'JobAcctGatherType=jobacct_gather/none',
        'AccountingStorageType=accounting_storage/none',
        'JobCompType=jobcomp/none',
        'MpiDefault=none',
        'ReturnToService=2',
        'SlurmdParameters=config_overrides',
        'MaxJobCount=100000',
        'MinJobAge=2',
        ...nodes,
        `PartitionName=bench Nodes=${NODE_LIST} Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
    );
    writeFileSync(join(this.dir, 'gres.conf'), `AutoDetect=off\nNodeName=${NODE_LIST} Name=gpu File=${join(dev, `gpu[0-${GPUS_PER_NODE - 1}]`)}\n`);
  }
}

function readPid(file: string): number | null {
  if (!existsSync(file)) return null;
  const n = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(n) && n > 0 ? n : null;
}
