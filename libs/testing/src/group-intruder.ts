import { AssignerProtocol, Kafka, logLevel } from 'kafkajs';
import { KafkaSecurity, kafkaConfig } from '@gantry/messaging';

/** The group requests of kafkajs's Broker (not exported by kafkajs: its private Cluster gives it). */
interface RawBroker {
  findGroupCoordinator(r: { groupId: string; coordinatorType: number }): Promise<unknown>;
  joinGroup(r: {
    groupId: string;
    sessionTimeout: number;
    rebalanceTimeout: number;
    memberId?: string;
    groupProtocols: Array<{ name: string; metadata: Buffer }>;
  }): Promise<{ memberId: string; generationId: number }>;
  syncGroup(r: {
    groupId: string;
    generationId: number;
    memberId: string;
    groupAssignment: Array<{ memberId: string; memberAssignment: Buffer }>;
  }): Promise<unknown>;
  heartbeat(r: { groupId: string; groupGenerationId: number; memberId: string }): Promise<unknown>;
  leaveGroup(r: { groupId: string; memberId: string }): Promise<unknown>;
  offsetCommit(r: {
    groupId: string;
    groupGenerationId: number;
    memberId: string;
    topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>;
  }): Promise<unknown>;
  offsetFetch(r: { groupId: string; topics: Array<{ topic: string; partitions: Array<{ partition: number }> }> }): Promise<unknown>;
}
interface RawCluster {
  connect(): Promise<void>;
  refreshMetadata(): Promise<void>;
  disconnect(): Promise<void>;
  getNodeIds(): number[];
  findBroker(r: { nodeId: number }): Promise<RawBroker>;
}
const CREATE_CLUSTER = 'private:Kafka:createCluster';

/** What one try at another's group came to: `ok`, or the broker's error (e.g. GROUP_AUTHORIZATION_FAILED). */
export type GroupAttempt = Record<
  'findCoordinator' | 'join' | 'syncAsLeader' | 'heartbeatAsMember' | 'leaveAsMember' | 'commitOffsets' | 'fetchOffsets',
  string
>;

/**
 * A client that speaks the consumer-group protocol itself, as a hostile agent would (kafkajs's own
 * Broker requests, over connections that authenticate as `security` says): it asks for a group's
 * coordinator, joins it, syncs as its leader with an assignment of its own making, heartbeats and
 * leaves as a member whose id it learnt, commits and fetches its offsets. Each request is tried
 * whatever the one before answered; the broker has a single node, which is every group's coordinator.
 */
export class GroupIntruder {
  private constructor(private readonly cluster: RawCluster) {}

  static async connect(brokers: string[], security: KafkaSecurity, clientId = 'group-intruder'): Promise<GroupIntruder> {
    // The same client settings as everything else (SASL, TLS), quiet: kafkajs logs every refusal, and refusals are the point here.
    const kafka = new Kafka({ ...kafkaConfig({ brokers, clientId, security }), logLevel: logLevel.NOTHING, retry: { retries: 0 } });
    const create = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
    if (!create) throw new Error('kafkajs has no private cluster factory: this helper needs kafkajs 2.2');
    const cluster = (kafka as unknown as Record<symbol, (o: object) => RawCluster>)[create]({
      metadataMaxAge: 60_000,
      allowAutoTopicCreation: false,
      maxInFlightRequests: null,
    });
    await cluster.connect();
    await cluster.refreshMetadata();
    return new GroupIntruder(cluster);
  }

  /** Every group request against `groupId`, as a stranger to it that learnt `memberId` (a member of it). */
  async tryEverything(groupId: string, memberId: string, topic: string, partitions: number[]): Promise<GroupAttempt> {
    const broker = await this.cluster.findBroker({ nodeId: this.cluster.getNodeIds()[0] });
    const outcome = async (request: () => Promise<unknown>): Promise<string> => {
      try {
        await request();
        return 'ok';
      } catch (e) {
        return (e as { type?: string }).type ?? (e as Error).message;
      }
    };
    const metadata = AssignerProtocol.MemberMetadata.encode({ version: 1, topics: [topic], userData: Buffer.from(JSON.stringify({ [topic]: partitions })) });
    const assignment = AssignerProtocol.MemberAssignment.encode({ version: 1, assignment: { [topic]: partitions }, userData: Buffer.alloc(0) });
    return {
      findCoordinator: await outcome(() => broker.findGroupCoordinator({ groupId, coordinatorType: 0 })),
      join: await outcome(() =>
        broker.joinGroup({ groupId, sessionTimeout: 10_000, rebalanceTimeout: 10_000, groupProtocols: [{ name: 'GantryKeyedAssigner', metadata }] }),
      ),
      syncAsLeader: await outcome(() =>
        broker.syncGroup({ groupId, generationId: 1, memberId, groupAssignment: [{ memberId, memberAssignment: assignment }] }),
      ),
      heartbeatAsMember: await outcome(() => broker.heartbeat({ groupId, groupGenerationId: 1, memberId })),
      leaveAsMember: await outcome(() => broker.leaveGroup({ groupId, memberId })),
      commitOffsets: await outcome(() =>
        broker.offsetCommit({
          groupId,
          groupGenerationId: -1,
          memberId: '',
          topics: [{ topic, partitions: partitions.map((partition) => ({ partition, offset: '1000000' })) }],
        }),
      ),
      fetchOffsets: await outcome(() => broker.offsetFetch({ groupId, topics: [{ topic, partitions: partitions.map((partition) => ({ partition })) }] })),
    };
  }

  async close(): Promise<void> {
    await this.cluster.disconnect().catch(() => undefined);
  }
}
