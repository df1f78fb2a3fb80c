import { constants } from 'node:os';

/**
 * The few lines of sh that run one attempt so that it outlives its agent (ADR 0020). The agent
 * starts it detached (its own session and process group) with stdout and stderr on the attempt's
 * log file, so nothing of the attempt passes through the agent. It
 * 1. catches SIGTERM/SIGINT/SIGHUP, noting 128 + the signal: a stop signals the whole group, the
 *    command gets the signal with its default action (a caught signal is reset by exec, an ignored
 *    one would not be) and the shim lives on to record how it ended;
 * 2. writes its pid to `<status>.pid` (an agent that restarts finds it there; once it is there, a
 *    stop is caught);
 * 3. moves itself into the attempt's cgroup(s) (each `cgroup.procs` file in $2, space-separated),
 *    so the command it starts is born there;
 * 4. opens the file $3 names (when it names one) as fd 3: what the command reads there (a
 *    sandbox's variables, a container's env file), written by the agent, readable by it only, and
 *    deleted by it when the attempt ends;
 * 5. runs the command in the foreground, unless a stop came before it started (the signal would
 *    have missed it), and writes its status to `<status>`: the exit code, or 128 + the signal
 *    number when a signal ended it (sh's $?), or the stop's 128 + signal when it never ran. With
 *    $4 set (a sandbox) the command starts with TERM, INT and HUP ignored: its wrappers must
 *    outlive a stop's SIGTERM, and the sandbox gives the job its defaults back (sandbox-argv.ts).
 * Cost per attempt: one sh and the fork of the command; every step above is a builtin.
 * SIGKILL of the group (the stop's escalation) kills the shim too: no status is written, and the
 * agent that sent it knows why.
 * One window stays open here: a stop that lands after the check of step 5 and before the command
 * has exec'd is caught by the shim (or ignored by a sandbox's wrappers) but misses the command.
 * The agent closes it by sending a stop within the attempt's first seconds twice (ProcessExecutor's
 * START_WINDOW_MS), rather than every attempt paying for a command in the background and a wait loop.
 */
export const SHIM_SCRIPT =
  's=$1; g=$2; e=$3; w=$4; shift 4; x=; trap x=143 TERM; trap x=130 INT; trap x=129 HUP; echo $$ > "$s.pid"; ' +
  'for f in $g; do echo $$ > "$f" || exit 125; done; if [ -n "$e" ]; then exec 3<"$e"; fi; ' +
  'if [ -z "$x" ]; then if [ -n "$w" ]; then (trap "" TERM INT HUP; exec "$@"); else "$@"; fi; x=$?; fi; echo $x > "$s"';

/** argv[0] of every shim: what `ps` shows, and part of what a restarted agent checks before it adopts a pid. */
export const SHIM_NAME = 'gantry-attempt';

/** What the shim does besides running the command: the file it opens as fd 3, and whether the command is a sandbox. */
export interface ShimExtras {
  fd3File?: string;
  sandboxed?: boolean;
}

/** The program and arguments that run `command` under the shim. */
export function shimArgv(statusPath: string, cgroupProcsFiles: string[], command: string[], extras: ShimExtras = {}): { file: string; args: string[] } {
  return {
    file: '/bin/sh',
    args: ['-c', SHIM_SCRIPT, SHIM_NAME, statusPath, cgroupProcsFiles.join(' '), extras.fd3File ?? '', extras.sandboxed ? '1' : '', ...command],
  };
}

export interface ShimStatus {
  exitCode: number | null;
  signal: string | null;
}

const SIGNAL_NAMES = new Map(Object.entries(constants.signals).map(([name, n]) => [n, name]));

/**
 * A status file's content as the exit it records; null when it is empty or not a number (the shim
 * is writing it, or died while it did). Above 128 with a known signal number: that signal (sh
 * cannot tell a command that exited 137 from one SIGKILLed; the signal is the likelier reading).
 */
export function parseShimStatus(text: string): ShimStatus | null {
  const t = text.trim();
  if (!/^\d{1,3}$/.test(t)) return null;
  const code = Number(t);
  const signal = code > 128 ? SIGNAL_NAMES.get(code - 128) : undefined;
  return signal ? { exitCode: null, signal } : { exitCode: code, signal: null };
}
