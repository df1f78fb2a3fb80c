import { randomInt } from 'node:crypto';
import { ICustomPartitioner } from 'kafkajs';
import { murmur2 } from './murmur2';

/** Kafka's `Utils.toPositive`: the low 31 bits, not the absolute value. */
const toPositive = (x: number) => x & 0x7fffffff;

/**
 * The partition Kafka's default partitioner (Java-compatible murmur2, as every Gantry producer and
 * the Java clients use) gives a message with this key, of `partitions`: where an agent finds the
 * commands of a node (contract 4.1: commands are keyed by nodeId).
 */
export function partitionForKey(key: string | Buffer, partitions: number): number {
  return toPositive(murmur2(key)) % partitions;
}

/** The distinct partitions that hold these keys, ascending. */
export function partitionsForKeys(keys: Iterable<string>, partitions: number): number[] {
  const set = new Set<number>();
  for (const k of keys) set.add(partitionForKey(k, partitions));
  return [...set].sort((a, b) => a - b);
}

/**
 * Every Gantry producer's partitioner: kafkajs's DefaultPartitioner (Java client 0.10.2) without
 * its per-message garbage. A partition the message names wins; a keyed message goes to
 * partitionForKey; a keyless one round-robin over the partitions that have a leader, from a random
 * start per topic.
 */
export const javaCompatiblePartitioner: ICustomPartitioner = () => {
  const counters = new Map<string, number>();
  return ({ topic, partitionMetadata, message }) => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (message.key !== null && message.key !== undefined) return partitionForKey(message.key, partitionMetadata.length);
    const next = (counters.get(topic) ?? randomInt(0x7fffffff)) + 1;
    counters.set(topic, next);
    const led = partitionMetadata.filter((p) => p.leader >= 0);
    return led.length > 0 ? led[toPositive(next) % led.length].partitionId : toPositive(next) % partitionMetadata.length;
  };
};
