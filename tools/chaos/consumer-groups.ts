import { KafkaSecurity, createKafka } from '@gantry/messaging';

/**
 * Members per consumer group of the run's broker. A group with none while its service runs and says
 * it is ready is a consumer that died inside a live process: the diagnosis a stalled fault needs.
 */
export async function consumerGroupMembers(brokers: string, security: KafkaSecurity): Promise<Record<string, number>> {
  return createKafka({ brokers: [brokers], clientId: 'gantry-chaos-groups', security }).withAdmin(async (admin) => {
    const { groups } = await admin.listGroups();
    const described = await admin.describeGroups(groups.map((g) => g.groupId).filter((g) => g.startsWith('gantry-') && !g.startsWith('gantry-chaos-')));
    return Object.fromEntries(described.groups.map((g) => [g.groupId, g.members.length]));
  });
}
