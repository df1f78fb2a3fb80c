/**
 * What a node's start failures in a row come to (contract §5.2, ADR 0035): a rank that timed out
 * starting there adds one, a rank the node reported started (RUNNING, or already SUCCEEDED) resets
 * the count to 0, and an operator's uncordon clears it. At `threshold` in a row the node is
 * cordoned with reason START_FAILURES (Slurm drains a node whose launches fail the same way); a
 * node already cordoned, for whatever reason, keeps its cordon and its reason.
 */
export type StartFailureVerdict = { kind: 'count' } | { kind: 'cordon' };

export function judgeStartFailures(inARow: number, threshold: number, cordoned: boolean): StartFailureVerdict {
  return !cordoned && inARow >= threshold ? { kind: 'cordon' } : { kind: 'count' };
}

/** Most nodes a job remembers having failed to start on (a job's row carries them). */
export const MAX_AVOIDED_NODES = 16;

/**
 * The nodes a job avoids after its attempt timed out starting on `failedOn`: those added to what
 * it avoided before, each once, the most recent kept when there are more than MAX_AVOIDED_NODES.
 */
export function nodesToAvoid(before: readonly string[], failedOn: readonly string[]): string[] {
  const kept = [...before.filter((id) => !failedOn.includes(id)), ...new Set(failedOn)];
  return kept.slice(Math.max(0, kept.length - MAX_AVOIDED_NODES));
}
