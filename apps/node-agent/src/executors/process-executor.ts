import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Execution, ExecutionResult, ExecutionSpec, Executor } from './executor';
import { jobEnvironment } from './job-environment';

/**
 * Runs the job's command as a child process in its own process group (so stopping it stops
 * everything it started), stdout and stderr to `<workdir>/<jobId>-<attempt>.log`, with the
 * environment jobEnvironment gives it (its GPU devices, its gang's rendezvous).
 * `image` is recorded, not used: this executor has no container runtime.
 */
export class ProcessExecutor implements Executor {
  constructor(private readonly workdir: string, private readonly killGraceMs: number) {
    mkdirSync(workdir, { recursive: true });
  }

  start(spec: ExecutionSpec, onExit: (r: ExecutionResult) => void): Execution {
    const log = createWriteStream(join(this.workdir, `${spec.jobId}-${spec.attempt}.log`), { flags: 'a' });
    let stoppedFor: string | null = null;
    let done = false;
    const finish = (r: Omit<ExecutionResult, 'stoppedFor'>) => {
      if (done) return;
      done = true;
      log.end();
      onExit({ ...r, stoppedFor });
    };
    const nodeIdsPath = join(this.workdir, `${spec.jobId}-${spec.attempt}.nodes`);
    const { env, nodeIdsFile } = jobEnvironment(spec, { path: process.env.PATH, home: process.env.HOME, nodeIdsPath });
    if (nodeIdsFile !== null) writeFileSync(nodeIdsPath, nodeIdsFile);
    const child = spawn(spec.command[0], spec.command.slice(1), { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.on('error', (err) => finish({ exitCode: null, signal: null, error: err.message }));
    child.on('exit', (code, signal) => finish({ exitCode: code, signal }));
    const signalGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        // already gone
      }
    };
    return {
      stop: (reason) => {
        if (done) return;
        stoppedFor ??= reason;
        signalGroup('SIGTERM');
        setTimeout(() => !done && signalGroup('SIGKILL'), this.killGraceMs).unref();
      },
    };
  }
}
