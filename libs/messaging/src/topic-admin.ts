import { KafkaConnection } from './kafka-client';

export interface TopicSpec {
  partitions: number;
  /** Topic-level configs, e.g. message.timestamp.type. */
  config?: Record<string, string>;
}

/**
 * Creates missing topics with explicit partition counts, the given replication factor and their
 * configs; existing topics are left as they are (their partition count is what producers and
 * agents read from the cluster, never assumed). Returns the names created.
 */
export async function ensureTopics(kafka: KafkaConnection, topics: Record<string, TopicSpec | number>, replicationFactor = 1): Promise<string[]> {
  return kafka.withAdmin(async (admin) => {
    const existing = new Set(await admin.listTopics());
    const missing = Object.entries(topics).filter(([name]) => !existing.has(name));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map(([topic, spec]) => {
          const s = typeof spec === 'number' ? { partitions: spec } : spec;
          return {
            topic,
            numPartitions: s.partitions,
            replicationFactor,
            configEntries: Object.entries(s.config ?? {}).map(([name, value]) => ({ name, value })),
          };
        }),
      });
    }
    return missing.map(([name]) => name);
  });
}

/** How many partitions a topic has, as the cluster says. */
export async function partitionCount(kafka: KafkaConnection, topic: string): Promise<number> {
  return kafka.withAdmin(async (admin) => {
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    return topics[0]?.partitions.length ?? 0;
  });
}
