import { Partitioners } from 'kafkajs';

const partitioner = Partitioners.DefaultPartitioner();

/**
 * The partition Kafka's default partitioner (Java-compatible murmur2, as every Gantry producer and
 * the Java clients use) gives a message with this key, of `partitions`: where an agent finds the
 * commands of a node (contract 4.1: commands are keyed by nodeId).
 */
export function partitionForKey(key: string, partitions: number): number {
  const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({ partitionId, leader: 0, replicas: [0], isr: [0], partitionErrorCode: 0 }));
  return partitioner({ topic: '', partitionMetadata, message: { key, value: null } });
}

/** The distinct partitions that hold these keys, ascending. */
export function partitionsForKeys(keys: Iterable<string>, partitions: number): number[] {
  const set = new Set<number>();
  for (const k of keys) set.add(partitionForKey(k, partitions));
  return [...set].sort((a, b) => a - b);
}
