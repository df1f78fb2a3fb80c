import { ChildProcess, spawn } from 'node:child_process';
import { Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { NodeSpawner } from './node-spawner';
import { SpawnedProcess, Spawner } from './spawner';

/**
 * The helper, in Python because its standard library spawns with vfork (subprocess, since 3.10: the
 * child shares the caller's memory until its exec, so nothing is copied) and nothing in Node does.
 * One request per line on stdin, JSON: {id, file, argv, env, log}. It answers {id, pid} or
 * {id, error}, and {pid, code} or {pid, signal} when a child it started ends (it reaps them on
 * SIGCHLD). It says {ready: true} first, and exits when its stdin closes (the agent is gone),
 * leaving its children running, as the agent's own would be.
 * The child gets what libuv's detached spawn gives: a session of its own, stdin on /dev/null,
 * stdout and stderr on the log, no other descriptor, every signal at its default and none blocked
 * (restore_signals undoes Python's own SIG_IGN of SIGPIPE and SIGXFSZ; os.posix_spawn would leave
 * glibc's two internal signals ignored). Each Popen is kept until its exit is read here: one
 * dropped earlier would be polled, and its status taken, by the next Popen's clean-up.
 */
export const HELPER_SOURCE = `
import errno, json, os, select, signal, subprocess, sys
wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *_: None)
children = {}
def say(o):
    b = (json.dumps(o) + "\\n").encode()
    while b:
        b = b[os.write(1, b):]
def reap():
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(st)
        p = children.pop(pid, None)
        if p is not None:
            p.returncode = code
        say({"pid": pid, "signal": signal.Signals(-code).name} if code < 0 else {"pid": pid, "code": code})
def start(q):
    try:
        log = os.open(q["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            p = subprocess.Popen(q["argv"], executable=q["file"], env=q["env"], stdin=subprocess.DEVNULL, stdout=log,
                                 stderr=subprocess.STDOUT, close_fds=True, restore_signals=True, start_new_session=True)
        finally:
            os.close(log)
        children[p.pid] = p
        say({"id": q["id"], "pid": p.pid})
    except Exception as e:
        # Anything a request can cause ends that request, never the helper.
        code = errno.errorcode.get(getattr(e, "errno", None), type(e).__name__)
        say({"id": q["id"], "error": "spawn %s %s: %s" % (q["file"], code, getattr(e, "strerror", None) or e)})
poll = select.poll()
poll.register(0, select.POLLIN)
poll.register(wake_r, select.POLLIN)
say({"ready": True})
buf = b""
while True:
    for fd, _ in poll.poll():
        if fd == wake_r:
            try:
                os.read(wake_r, 4096)
            except BlockingIOError:
                pass
            reap()
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            sys.exit(0)
        *lines, buf = (buf + chunk).split(b"\\n")
        for line in lines:
            start(json.loads(line))
`;

interface Reply {
  ready?: boolean;
  id?: number;
  pid?: number;
  error?: string;
  code?: number;
  signal?: string;
}

/** A process the helper was asked for: what it answered, and who listens. */
class HelperProcess implements SpawnedProcess {
  pid: number | null = null;
  private spawned: (pid: number) => void = () => undefined;
  private exited: (code: number | null, signal: string | null) => void = () => undefined;
  private failed: (err: Error) => void = () => undefined;
  private lostIt: () => void = () => undefined;
  onSpawned(cb: (pid: number) => void): void {
    this.spawned = cb;
    if (this.pid !== null) cb(this.pid);
  }
  onExit(cb: (code: number | null, signal: string | null) => void): void {
    this.exited = cb;
  }
  onError(cb: (err: Error) => void): void {
    this.failed = cb;
  }
  onLost(cb: () => void): void {
    this.lostIt = cb;
  }
  started(pid: number): void {
    this.pid = pid;
    this.spawned(pid);
  }
  ended(code: number | null, signal: string | null): void {
    this.exited(code, signal);
  }
  error(err: Error): void {
    this.failed(err);
  }
  lost(): void {
    // Nobody will reap it now: its pid may be reused once it ends, so it is no longer vouched for.
    this.pid = null;
    this.lostIt();
  }
}

type Request = { id: number; file: string; argv: string[]; env: Record<string, string>; log: string };

/**
 * Starts attempts' shims through one long-lived helper process (HELPER_SOURCE) instead of forking
 * the agent for each (ADR 0032). Where the helper cannot run (no python3) or dies, the agent goes
 * on with Node's spawn and says so once: processes the helper had started are handed to their
 * watchers as lost (read from the shim's files from then on); requests it never took are started
 * by Node.
 */
export class SpawnHelper implements Spawner {
  private helper: ChildProcess | null;
  private isReady = false;
  private nextId = 1;
  /** Requests made before the helper said it was ready: held, sent then, or spawned by Node if it never is. */
  private queued: { req: Request; proc: HelperProcess }[] = [];
  private readonly asked = new Map<number, HelperProcess>();
  private readonly running = new Map<number, HelperProcess>();
  private readonly fallback = new NodeSpawner();
  private settle: (helper: boolean) => void = () => undefined;
  /** True once the helper said it is ready; false if it went before (attempts are started by Node). */
  readonly ready = new Promise<boolean>((resolve) => (this.settle = resolve));

  constructor(
    private readonly logger: { warn(o: object, m: string): void },
    python = 'python3',
  ) {
    const helper = spawn(python, ['-c', HELPER_SOURCE], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.helper = helper;
    // The helper must not keep the agent alive: when the agent exits, its stdin closes and it follows.
    helper.unref();
    // Its stdio pipes are sockets (typed as plain streams).
    (helper.stdin as Socket).unref();
    (helper.stdout as Socket).unref();
    helper.stdin!.on('error', () => undefined); // EPIPE once it died: 'exit' says so.
    createInterface({ input: helper.stdout! }).on('line', (line) => this.reply(line));
    helper.on('error', (err) => this.gone(`not started: ${err.message}`));
    // 'close', not 'exit': every line it wrote has been read by then.
    helper.on('close', (code, signal) => this.gone(`exited (${signal ?? code})`));
  }

  /** The helper's pid while it runs (what `ps` shows as python3 beside the agent). */
  get pid(): number | null {
    return this.helper?.pid ?? null;
  }

  /** Whether attempts are started by the helper now (false: by Node's spawn). */
  get active(): boolean {
    return this.helper !== null;
  }

  /** For the agent's start-up line: who starts attempts now. */
  get mode(): 'helper' | 'helper (starting)' | 'node (helper unavailable)' {
    return !this.helper ? 'node (helper unavailable)' : this.isReady ? 'helper' : 'helper (starting)';
  }

  spawn(file: string, args: string[], o: { env: Record<string, string>; logPath: string }): SpawnedProcess {
    if (!this.helper) return this.fallback.spawn(file, args, o);
    // What Node's spawn refuses at once is refused at once here too (the caller fails the attempt with it).
    const nul = [file, ...args, ...Object.entries(o.env).flat()].find((s) => typeof s === 'string' && s.includes('\0'));
    if (nul !== undefined) throw new Error(`cannot spawn ${file}: an argument or environment entry holds a NUL byte (${JSON.stringify(nul.slice(0, 40))})`);
    const proc = new HelperProcess();
    const req: Request = { id: this.nextId++, file, argv: [file, ...args], env: o.env, log: o.logPath };
    if (this.isReady) this.send(req, proc);
    else this.queued.push({ req, proc });
    return proc;
  }

  private send(req: Request, proc: HelperProcess): void {
    this.asked.set(req.id, proc);
    this.helper!.stdin!.write(JSON.stringify(req) + '\n');
  }

  private reply(line: string): void {
    let r: Reply;
    try {
      r = JSON.parse(line) as Reply;
    } catch {
      return;
    }
    if (r.ready) {
      this.isReady = true;
      this.settle(true);
      for (const { req, proc } of this.queued.splice(0)) this.send(req, proc);
    } else if (r.id !== undefined) {
      const proc = this.asked.get(r.id);
      this.asked.delete(r.id);
      if (!proc) return;
      if (r.pid !== undefined) {
        this.running.set(r.pid, proc);
        proc.started(r.pid);
      } else proc.error(new Error(r.error ?? 'spawn failed'));
    } else if (r.pid !== undefined) {
      const proc = this.running.get(r.pid);
      this.running.delete(r.pid);
      proc?.ended(r.code ?? null, r.signal ?? null);
    }
  }

  private gone(why: string): void {
    if (!this.helper) return;
    this.helper = null;
    this.settle(false);
    this.logger.warn({ why }, "the spawn helper is gone: attempts are started with Node's spawn from now on");
    // Never sent: nothing started; Node starts them now.
    for (const { req, proc } of this.queued.splice(0)) {
      try {
        this.adoptInto(proc, this.fallback.spawn(req.file, req.argv.slice(1), { env: req.env, logPath: req.log }));
      } catch (err) {
        proc.error(err as Error);
      }
    }
    // Sent: started or not, nobody knows; their shims' files will tell.
    for (const proc of [...this.asked.values(), ...this.running.values()]) proc.lost();
    this.asked.clear();
    this.running.clear();
  }

  /** Forwards what `real` reports to the watcher of `proc`. */
  private adoptInto(proc: HelperProcess, real: SpawnedProcess): void {
    real.onSpawned((pid) => proc.started(pid));
    real.onExit((code, signal) => proc.ended(code, signal));
    real.onError((err) => proc.error(err));
  }
}
