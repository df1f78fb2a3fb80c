/**
 * Reasons an agent gives in a FAILED job report (gantry.job-reports.v1 `reason`) when the attempt
 * ended for a cause of its own node rather than its command's exit code (contract 4.4). Shown as
 * the job's `reason`; none is retried (only lost attempts are).
 */
export const ATTEMPT_END_REASONS = {
  /** Still running at its `maxRuntimeSeconds`: stopped by the agent. */
  deadlineExceeded: 'DEADLINE_EXCEEDED',
  /** Killed by the kernel for going over its `memoryMiB` (its cgroup counted an OOM kill). */
  oomKilled: 'OOM_KILLED',
  /** It names an `image` and the node has no container runtime, with GANTRY_AGENT_IMAGE_POLICY=refuse. */
  imageUnsupported: 'IMAGE_UNSUPPORTED',
  /** It ended while its agent was down and left no exit status (killed together with its shim). */
  exitUnknown: 'EXIT_UNKNOWN',
} as const;

/**
 * An `image` that means "no image": the command runs on the node directly whatever the agent's
 * image policy (the value the examples and tests use; contract 4.4 requires the field).
 */
export const NO_IMAGE = 'none';
