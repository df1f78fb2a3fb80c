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
  /** Its limits where the node enforces them (a cgroup, a container); 0 or absent: none. */
  cpuCores?: number;
  memoryMiB?: number;
  /** An array's child: its index (GANTRY_ARRAY_INDEX); absent for any other job. */
  arrayIndex?: number;
  /** The job's owner: the sandbox's uid is chosen by it (owners never share one on a node). */
  owner: string;
  /** Its queue lets it share the node's IPC namespace and /dev/shm. */
  hostIpc: boolean;
}

/** The owner of a RUN that names none (sent by a control plane older than the sandbox): such attempts share one uid. */
export const UNKNOWN_OWNER = '-';

export interface ExecutionResult {
  exitCode: number | null;
  signal: string | null;
  /** Set when the agent stopped it (KILL, fence): why. */
  stoppedFor: string | null;
  /** It could not be started: why (SPAWN_FAILED). */
  error?: string;
  /** A FAILED reason the executor knows better than the exit code (OOM_KILLED, IMAGE_UNSUPPORTED, EXIT_UNKNOWN; contracts' ATTEMPT_END_REASONS). */
  reason?: string;
}

export interface Execution {
  /** SIGTERM now, SIGKILL after `graceMs` (absent: the agent's GANTRY_KILL_GRACE_MS); resolves nothing, the exit callback reports. */
  stop(reason: string, graceMs?: number): void;
}

/** The attempt an earlier process of this agent started (its record in the state directory). */
export interface AttemptRef {
  nodeId: string;
  jobId: string;
  attempt: number;
}

/**
 * How a node runs work: ProcessExecutor (the command, under a shim that outlives the agent, in a
 * cgroup or a container), SleepExecutor (nothing, for load tests).
 */
export interface Executor {
  start(spec: ExecutionSpec, onExit: (result: ExecutionResult) => void): Execution;
  /**
   * Takes over an attempt an earlier process of this agent started: watches it while it runs, or
   * reports how it ended while no agent was watching. Never calls onExit before it returns.
   * Absent: this executor's attempts do not outlive the agent.
   */
  resume?(ref: AttemptRef, onExit: (result: ExecutionResult) => void): Execution;
}
