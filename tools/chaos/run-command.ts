import { ChildProcess, spawn } from 'node:child_process';

/** Scripts the chaos run is waiting on, so Ctrl-C can stop them too. */
const children = new Set<ChildProcess>();

export function killRunningCommands(): void {
  for (const c of children) c.kill('SIGTERM');
}

/** Runs a command to completion and returns its stdout; rejects with its output's tail on a non-zero exit. */
export function runCommand(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => {
      children.delete(child);
      reject(e);
    });
    child.on('close', (code, signal) => {
      children.delete(child);
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} exited with ${code ?? signal}\n${(err || out).trim().split('\n').slice(-20).join('\n')}`));
    });
  });
}
