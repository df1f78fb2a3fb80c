/*
 * The timings several services must agree on, and every rule between them, in one place. Agents
 * beat every GANTRY_HEARTBEAT_MS; the control plane calls a node DEGRADED after
 * GANTRY_NODE_SUSPECT_MS of silence and UNHEALTHY (its attempts ended) after GANTRY_NODE_DEAD_MS;
 * an agent cut off from Kafka stops its own attempts after GANTRY_AGENT_FENCE_MS, before the control
 * plane places them elsewhere (ADR 0007). A default that depends on another setting follows the
 * value the user gave that setting, so setting only the contract's two timeouts is enough.
 */

export interface Timings {
  GANTRY_HEARTBEAT_MS: number;
  GANTRY_NODE_SUSPECT_MS: number;
  GANTRY_NODE_DEAD_MS: number;
  /** The agent's only. */
  GANTRY_AGENT_FENCE_MS?: number;
}

/** Beats per suspect period at the default heartbeat: a node is DEGRADED after three missed beats. */
export const BEATS_PER_SUSPECT = 3;
/** The agent's fence, as a share of the dead timeout: it stops its work a quarter of the timeout before the control plane gives up on it. */
export const FENCE_SHARE_OF_DEAD = 0.75;

/** GANTRY_HEARTBEAT_MS when unset: a third of the suspect timeout (5000 at the defaults). */
export function defaultHeartbeatMs(suspectMs: number): number {
  return Math.max(100, Math.round(suspectMs / BEATS_PER_SUSPECT));
}

/** GANTRY_AGENT_FENCE_MS when unset: three quarters of the dead timeout (30000 at the defaults). */
export function defaultFenceMs(deadMs: number): number {
  return Math.round(deadMs * FENCE_SHARE_OF_DEAD);
}

/** GANTRY_PHANTOM_GRACE_MS when unset: three heartbeat periods, and never under 15 s (an agent restart). */
export function defaultPhantomGraceMs(heartbeatMs: number): number {
  return Math.max(15_000, 3 * heartbeatMs);
}

/** GANTRY_INGEST_STALL_MS when unset: two heartbeat periods, and never under 10 s. */
export function defaultIngestStallMs(heartbeatMs: number): number {
  return Math.max(10_000, 2 * heartbeatMs);
}

/** GANTRY_DETECTOR_INTERVAL_MS when unset: a twentieth of the dead timeout, never under 2 s (2000 at the defaults). */
export function defaultDetectorIntervalMs(deadMs: number): number {
  // A round reads and judges the whole fleet (its cost: ADR 0007), and finer rounds than this only
  // judge a death up to 5 % sooner.
  return Math.max(2_000, Math.round(deadMs / 20));
}

/**
 * What is wrong between the timings, one line per broken rule, each naming its variables and
 * values. `given` holds the variables the environment set; the others are shown as defaults.
 */
export function timingProblems(t: Timings, given: ReadonlySet<string> = new Set(Object.keys(t))): string[] {
  const show = (name: keyof Timings) => `${name}=${t[name]}${given.has(name) ? '' : ' (default)'}`;
  const problems: string[] = [];
  const hb = t.GANTRY_HEARTBEAT_MS;
  const suspect = t.GANTRY_NODE_SUSPECT_MS;
  const dead = t.GANTRY_NODE_DEAD_MS;
  if (hb >= suspect) {
    problems.push(`${show('GANTRY_HEARTBEAT_MS')} must be shorter than ${show('GANTRY_NODE_SUSPECT_MS')}: a node that beats on time would look silent`);
  }
  if (suspect >= dead) {
    problems.push(`${show('GANTRY_NODE_SUSPECT_MS')} must be shorter than ${show('GANTRY_NODE_DEAD_MS')}: a node is DEGRADED before it is dead`);
  } else if (dead - suspect <= hb) {
    // ADR 0007: nodes of a partitioned rack cross the dead timeout spread over one heartbeat period.
    problems.push(
      `${show('GANTRY_NODE_DEAD_MS')} must exceed ${show('GANTRY_NODE_SUSPECT_MS')} by more than ${show('GANTRY_HEARTBEAT_MS')}: a partitioned rack must look partitioned before its first node is dead`,
    );
  }
  const fence = t.GANTRY_AGENT_FENCE_MS;
  if (fence !== undefined) {
    if (fence >= dead) {
      problems.push(
        `${show('GANTRY_AGENT_FENCE_MS')} must be shorter than ${show('GANTRY_NODE_DEAD_MS')}: the agent must stop its work before the control plane places it elsewhere`,
      );
    }
    if (fence <= hb) {
      problems.push(`${show('GANTRY_AGENT_FENCE_MS')} must be longer than ${show('GANTRY_HEARTBEAT_MS')}: an agent waits a period for each acknowledgement`);
    }
  }
  return problems;
}
