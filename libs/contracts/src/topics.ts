/** Kafka topics. The `.v1` names are the public agent protocol (contract §3); the rest are internal. */
export const TOPICS = {
  heartbeats: 'gantry.heartbeats.v1',
  jobReports: 'gantry.job-reports.v1',
  agentCommands: 'gantry.agent-commands.v1',
  deadLetter: 'gantry.dead-letter.v1',
  /** Internal: wake-ups for the scheduler (JOB_CREATED, CAPACITY_RELEASED), sent by WakeUpSender after a commit, not through the outbox. */
  jobLifecycle: 'gantry.internal.job-lifecycle.v1',
  /** Public (contract §4.5): every job event, key = job id, in seq order per job (ADR 0028). */
  jobEvents: 'gantry.job-events.v1',
} as const;

export type TopicName = (typeof TOPICS)[keyof typeof TOPICS];

/**
 * Not a Kafka topic: outbox rows under this name stand for the RUNs of one placed job, built and
 * sent by the outbox relay in bounded chunks (one row per job, not one RUN per rank in the
 * scheduler's transaction).
 */
export const OUTBOX_DISPATCH = 'gantry.internal.dispatch';

/**
 * Default partition counts. Heartbeats and commands are keyed by nodeId. An agent reads only the
 * command partitions of its own nodes, so a command is read by the agents whose nodes share its
 * partition: fleet size / partitions of them (docs/adr/0015). The production overlay creates the
 * command topic with 1,024 partitions (KAFKA_COMMAND_PARTITIONS); dev and test use 64.
 */
export const TOPIC_PARTITIONS: Record<TopicName, number> = {
  [TOPICS.heartbeats]: 12,
  [TOPICS.jobReports]: 6,
  [TOPICS.agentCommands]: 64,
  [TOPICS.deadLetter]: 3,
  [TOPICS.jobLifecycle]: 3,
  [TOPICS.jobEvents]: 6,
};

/**
 * Topic configs. Beats and reports are stamped with the broker's receive time (LogAppendTime): the
 * clock-skew check compares a message's own time with when the broker got it, so a message that
 * waited in Kafka (a consumer that was down) is not refused for its age.
 */
export const TOPIC_CONFIGS: Partial<Record<TopicName, Record<string, string>>> = {
  [TOPICS.heartbeats]: { 'message.timestamp.type': 'LogAppendTime' },
  [TOPICS.jobReports]: { 'message.timestamp.type': 'LogAppendTime' },
};
