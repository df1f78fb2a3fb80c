/** What an agent needs to start one rank of one attempt. */
export interface ExecutionSpec {
  /** The node this rank runs on (GANTRY_NODE_ID). */
  nodeId: string;
  jobId: string;
  attempt: number;
  image: string;
  command: string[];
  env: Record<string, string>;
  gang: { size: number; rank: number; nodeIds: string[]; masterAddr?: string; masterPort?: number };
  /** The GPU devices this rank holds; absent: the RUN did not say (placed before devices were assigned), the variables are left alone. */
  gpuIndices?: number[];
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
