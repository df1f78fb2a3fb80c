import { AssignerProtocol, PartitionAssigner } from 'kafkajs';
import { partitionsForKeys } from './partitioning';

export const KEYED_ASSIGNER_NAME = 'GantryKeyedAssigner';

/**
 * A kafkajs partition assigner that gives each member of the group only the partitions holding its
 * own keys (an agent: the nodes it speaks for), instead of sharing the topic's partitions out.
 * kafkajs has no manual assignment; a group of one member with this assigner is the same thing, and
 * keeps offsets and liveness in the broker. Each member announces its partitions in its
 * subscription's user data, computed from the topic's partition count as the member sees it; the
 * leader assigns each member what it asked for. A member that could not tell (no metadata yet) gets
 * every partition and filters, which costs reads, never correctness.
 */
export function keyedPartitionAssigner(keys: () => Iterable<string>): PartitionAssigner {
  return ({ cluster }) => ({
    name: KEYED_ASSIGNER_NAME,
    version: 1,
    protocol({ topics }) {
      const wanted: Record<string, number[]> = {};
      for (const topic of topics) {
        const count = cluster.findTopicPartitionMetadata(topic)?.length ?? 0;
        if (count > 0) wanted[topic] = partitionsForKeys(keys(), count);
      }
      return {
        name: KEYED_ASSIGNER_NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: 1, topics, userData: Buffer.from(JSON.stringify(wanted)) }),
      };
    },
    async assign({ members, topics }) {
      return members.map(({ memberId, memberMetadata }) => {
        const meta = AssignerProtocol.MemberMetadata.decode(memberMetadata);
        let wanted: Record<string, number[]> = {};
        try {
          wanted = JSON.parse(meta?.userData?.toString() || '{}');
        } catch {
          wanted = {};
        }
        const assignment: Record<string, number[]> = {};
        for (const topic of topics) {
          const all = cluster.findTopicPartitionMetadata(topic).map((p) => p.partitionId);
          const asked = Array.isArray(wanted[topic]) ? wanted[topic].filter((p) => all.includes(p)) : null;
          assignment[topic] = asked && asked.length > 0 ? asked : all;
        }
        return { memberId, memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 1, assignment, userData: Buffer.alloc(0) }) };
      });
    },
  });
}
