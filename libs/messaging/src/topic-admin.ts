import { Kafka } from 'kafkajs';

/** Creates missing topics with explicit partition counts; existing topics are left as they are. */
export async function ensureTopics(kafka: Kafka, topics: Record<string, number>, replicationFactor = 1): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = Object.entries(topics).filter(([name]) => !existing.has(name));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map(([topic, numPartitions]) => ({ topic, numPartitions, replicationFactor })),
      });
    }
    return missing.map(([name]) => name);
  } finally {
    await admin.disconnect();
  }
}
