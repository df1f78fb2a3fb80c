import { AclEntry, AclFilter, AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } from 'kafkajs';
import { FLEET_GROUP_PREFIX, TOPICS, nodeCommandGroup, nodeKafkaPrincipal } from '@gantry/contracts';
import { KafkaConnection } from './kafka-client';

/**
 * The SCRAM principals of Gantry: one per role (User:gantry-<role>). `admin` is the broker's own
 * super user. `fleet` is the simulated fleet's (a test harness, never handed to a real node): a real
 * agent is its node's own principal (nodeKafkaPrincipal, ADR 0034).
 */
export const KAFKA_ROLES = ['gateway', 'scheduler', 'ingester', 'reconciler', 'fleet'] as const;
export type KafkaRole = (typeof KAFKA_ROLES)[number];

export function kafkaPrincipal(role: KafkaRole | 'admin'): string {
  return `gantry-${role}`;
}

interface Grant {
  topics?: { read?: string[]; write?: string[] };
  /** Consumer groups it may join: exact names, or a prefix ending in '*'. */
  groups?: string[];
  /** ALTER on the cluster: create and delete ACLs. */
  alterCluster?: boolean;
}

/**
 * Least privilege (contract 4.1). Every control-plane service runs an outbox relay, which
 * publishes whatever rows are waiting (commands, wake-ups, dead letters), so each may write those
 * topics; beyond that a role reads only what it consumes. Agents may write beats and reports and
 * read commands, nothing else: not even the dead-letter topic.
 */
const OUTBOX_TOPICS = [TOPICS.agentCommands, TOPICS.jobLifecycle, TOPICS.deadLetter];
const AGENT_TOPICS = { read: [TOPICS.agentCommands], write: [TOPICS.heartbeats, TOPICS.jobReports] };
export const KAFKA_GRANTS: Record<KafkaRole, Grant> = {
  // The gateway also publishes job events (one gateway at a time, ADR 0028), and gives each node's
  // principal its one group ACL (ADR 0034), which takes ALTER on the cluster.
  gateway: { topics: { write: [...OUTBOX_TOPICS, TOPICS.jobEvents] }, alterCluster: true },
  scheduler: { topics: { read: [TOPICS.jobLifecycle], write: OUTBOX_TOPICS }, groups: ['gantry-scheduler'] },
  ingester: { topics: { read: [TOPICS.heartbeats], write: [TOPICS.deadLetter] }, groups: ['gantry-heartbeat-ingester'] },
  reconciler: {
    topics: { read: [TOPICS.heartbeats, TOPICS.jobReports], write: OUTBOX_TOPICS },
    groups: ['gantry-reconciler', 'gantry-reconciler-heartbeats'],
  },
  fleet: { topics: AGENT_TOPICS, groups: [`${FLEET_GROUP_PREFIX}*`] },
};

const allow = (principal: string, resourceType: AclResourceTypes, name: string, operation: AclOperationTypes): AclEntry => ({
  resourceType,
  resourceName: name.endsWith('*') ? name.slice(0, -1) : name,
  resourcePatternType: name.endsWith('*') ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
  principal,
  host: '*',
  operation,
  permissionType: AclPermissionTypes.ALLOW,
});

/**
 * The ACL entries of every role, and the topic grants of every node's principal, for the
 * authorizer (StandardAuthorizer: nothing is allowed that no ACL allows). Nodes' topic grants go
 * to User:*, one entry per topic: the authorizer scans a topic's entries on every produce and
 * fetch, and one literal entry per node made that cost grow with the fleet (bench/kafka-acls,
 * ADR 0034). Every principal the broker knows is Gantry's; what nodes write is signed per node,
 * and what keeps one node from another's commands is the group ACL, which is per node.
 */
export function kafkaAcls(): AclEntry[] {
  const roles = KAFKA_ROLES.flatMap((role) => {
    const g = KAFKA_GRANTS[role];
    const principal = `User:${kafkaPrincipal(role)}`;
    return [
      ...(g.topics?.read ?? []).map((t) => allow(principal, AclResourceTypes.TOPIC, t, AclOperationTypes.READ)),
      ...(g.topics?.write ?? []).map((t) => allow(principal, AclResourceTypes.TOPIC, t, AclOperationTypes.WRITE)),
      ...(g.groups ?? []).map((name) => allow(principal, AclResourceTypes.GROUP, name, AclOperationTypes.READ)),
      ...(g.alterCluster ? [allow(principal, AclResourceTypes.CLUSTER, 'kafka-cluster', AclOperationTypes.ALTER)] : []),
    ];
  });
  const nodes = [
    ...AGENT_TOPICS.read.map((t) => allow('User:*', AclResourceTypes.TOPIC, t, AclOperationTypes.READ)),
    ...AGENT_TOPICS.write.map((t) => allow('User:*', AclResourceTypes.TOPIC, t, AclOperationTypes.WRITE)),
  ];
  return [...roles, ...nodes];
}

/**
 * The one group ACL of a node's principal in one enrollment generation: READ (join, sync,
 * heartbeat, commit, leave, fetch offsets) on its own command group, a literal name. Nothing else
 * names a group for a node principal, so it cannot find, join, commit for or leave another node's.
 */
export function nodeGroupAcl(nodeId: string, generation: number): AclEntry {
  return allow(`User:${nodeKafkaPrincipal(nodeId, generation)}`, AclResourceTypes.GROUP, nodeCommandGroup(nodeId), AclOperationTypes.READ);
}

/** Every ACL on a node's command group, whichever generation's principal it names: removed when the node is revoked or enrolled again. */
export function nodeGroupAclFilter(nodeId: string): AclFilter {
  // No principal or host: any.
  return {
    resourceType: AclResourceTypes.GROUP,
    resourceName: nodeCommandGroup(nodeId),
    resourcePatternType: ResourcePatternTypes.LITERAL,
    operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ANY,
  };
}

/**
 * Principals Gantry no longer has, whose ACLs are removed: the agents' shared user, whose prefix ACL
 * let any node use any node's command group (ADR 0034). Its SCRAM user is the operator's to delete.
 */
export const RETIRED_PRINCIPALS = ['User:gantry-agent'];

/** Writes the ACLs (creating one that exists already changes nothing) and removes those of retired principals. */
export async function applyKafkaAcls(kafka: KafkaConnection): Promise<number> {
  const acl = kafkaAcls();
  await kafka.withAdmin(async (admin) => {
    await admin.createAcls({ acl });
    await admin.deleteAcls({
      filters: RETIRED_PRINCIPALS.map((principal) => ({
        resourceType: AclResourceTypes.ANY,
        resourcePatternType: ResourcePatternTypes.ANY,
        principal,
        operation: AclOperationTypes.ANY,
        permissionType: AclPermissionTypes.ANY,
      })),
    });
  });
  return acl.length;
}
