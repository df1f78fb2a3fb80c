/** What an agent needs to start one rank of one attempt. */
export interface ExecutionSpec {
  jobId: string;
  attempt: number;
  image: string;
  command: string[];
  env: Record<string, string>;
  gang: { size: number; rank: number; nodeIds: string[] };
}

export interface ExecutionResult {
  exitCode: number | null;
  signal: string | null;
  /** Set when the agent stopped it (KILL, fence): why. */
  stoppedFor: string | null;
  error?: string;
}

export interface Execution {
  /** SIGTERM now, SIGKILL after the grace period; resolves nothing, the exit callback reports. */
  stop(reason: string): void;
}

/**
 * How a node runs work. `process` (a child process) now; a container runtime implements the same
 * interface later, with `image` meaning something.
 */
export interface Executor {
  start(spec: ExecutionSpec, onExit: (result: ExecutionResult) => void): Execution;
}
