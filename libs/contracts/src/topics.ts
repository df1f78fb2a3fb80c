/** Kafka topics. The `.v1` names are the public agent protocol (contract §3); the rest are internal. */
export const TOPICS = {
  heartbeats: 'gantry.heartbeats.v1',
  jobReports: 'gantry.job-reports.v1',
  agentCommands: 'gantry.agent-commands.v1',
  deadLetter: 'gantry.dead-letter.v1',
  /** Internal: job created / state changed, published from the outbox; wakes the scheduler. */
  jobLifecycle: 'gantry.internal.job-lifecycle.v1',
  /** Public (contract §4.5): every job event, key = job id, in seq order per job (ADR 0013). */
  jobEvents: 'gantry.job-events.v1',
} as const;

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

/**
 * Explicit partition counts. Heartbeats and commands are keyed by nodeId, so their partition
 * count bounds how many ingester/agent consumers can share the load.
 */
export const TOPIC_PARTITIONS: Record<TopicName, number> = {
  [TOPICS.heartbeats]: 12,
  [TOPICS.jobReports]: 6,
  [TOPICS.agentCommands]: 12,
  [TOPICS.deadLetter]: 3,
  [TOPICS.jobLifecycle]: 3,
  [TOPICS.jobEvents]: 6,
};
