/**
 * How an attempt's shim is started: `file` with `args` (its argv[0] is `file`), `env` and nothing
 * else of the agent's, stdin on /dev/null, stdout and stderr appended to `logPath`, in a session
 * and process group of its own, every signal at its default and none blocked. NodeSpawner forks
 * the agent (Node's spawn); SpawnHelper asks a small helper process that spawns with vfork
 * (ADR 0032: why, and what each costs).
 */
export interface Spawner {
  spawn(file: string, args: string[], o: { env: Record<string, string>; logPath: string }): SpawnedProcess;
}

/**
 * One process a Spawner started. Exactly one of `exit`, `error` or `lost` ends it, and `exit` comes
 * only after `spawned`; `pid` is set once `spawned` was called, and null again once it is lost.
 */
export interface SpawnedProcess {
  readonly pid: number | null;
  /** Its pid is known (at once with Node's spawn, a reply later with the helper). */
  onSpawned(cb: (pid: number) => void): void;
  /** It ended: its exit code, or the signal that ended it. */
  onExit(cb: (code: number | null, signal: string | null) => void): void;
  /** It could not be started. */
  onError(cb: (err: Error) => void): void;
  /**
   * Whoever would have reaped it is gone (the helper died): it may still run, its end must be read
   * from the shim's files, and its pid file is what names it from now on.
   */
  onLost(cb: () => void): void;
}
