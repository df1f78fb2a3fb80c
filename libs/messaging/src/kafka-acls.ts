import { AclEntry, AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } from 'kafkajs';
import { TOPICS } from '@gantry/contracts';
import { KafkaConnection } from './kafka-client';

/** The Kafka principals of Gantry: one per role (User:gantry-<role>). `admin` is the broker's own super user. */
export const KAFKA_ROLES = ['gateway', 'scheduler', 'ingester', 'reconciler', 'agent'] as const;
export type KafkaRole = (typeof KAFKA_ROLES)[number];

export function kafkaPrincipal(role: KafkaRole | 'admin'): string {
  return `gantry-${role}`;
}

interface Grant {
  topics?: { read?: string[]; write?: string[] };
  /** Consumer groups it may join: exact names, or a prefix ending in '*'. */
  groups?: string[];
}

/**
 * Least privilege (contract 4.1). Every control-plane service runs an outbox relay, which
 * publishes whatever rows are waiting (commands, wake-ups, dead letters), so each may write those
 * topics; beyond that a role reads only what it consumes. Agents may write beats and reports and
 * read commands, nothing else: not even the dead-letter topic.
 */
const OUTBOX_TOPICS = [TOPICS.agentCommands, TOPICS.jobLifecycle, TOPICS.deadLetter];
export const KAFKA_GRANTS: Record<KafkaRole, Grant> = {
  // The gateway also publishes job events (one gateway at a time, ADR 0028).
  gateway: { topics: { write: [...OUTBOX_TOPICS, TOPICS.jobEvents] } },
  scheduler: { topics: { read: [TOPICS.jobLifecycle], write: OUTBOX_TOPICS }, groups: ['gantry-scheduler'] },
  ingester: { topics: { read: [TOPICS.heartbeats], write: [TOPICS.deadLetter] }, groups: ['gantry-heartbeat-ingester'] },
  reconciler: {
    topics: { read: [TOPICS.heartbeats, TOPICS.jobReports], write: OUTBOX_TOPICS },
    groups: ['gantry-reconciler', 'gantry-reconciler-heartbeats'],
  },
  agent: { topics: { read: [TOPICS.agentCommands], write: [TOPICS.heartbeats, TOPICS.jobReports] }, groups: ['gantry-agent-*'] },
};

/** The ACL entries of every role, for the authorizer (StandardAuthorizer: nothing is allowed that no ACL allows). */
export function kafkaAcls(): AclEntry[] {
  const acl = (role: KafkaRole, resourceType: AclResourceTypes, name: string, operation: AclOperationTypes): AclEntry => ({
    resourceType,
    resourceName: name.endsWith('*') ? name.slice(0, -1) : name,
    resourcePatternType: name.endsWith('*') ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal: `User:${kafkaPrincipal(role)}`,
    host: '*',
    operation,
    permissionType: AclPermissionTypes.ALLOW,
  });
  return KAFKA_ROLES.flatMap((role) => {
    const g = KAFKA_GRANTS[role];
    return [
      ...(g.topics?.read ?? []).map((t) => acl(role, AclResourceTypes.TOPIC, t, AclOperationTypes.READ)),
      ...(g.topics?.write ?? []).map((t) => acl(role, AclResourceTypes.TOPIC, t, AclOperationTypes.WRITE)),
      ...(g.groups ?? []).map((name) => acl(role, AclResourceTypes.GROUP, name, AclOperationTypes.READ)),
    ];
  });
}

/** Writes the ACLs (creating one that exists already changes nothing). */
export async function applyKafkaAcls(kafka: KafkaConnection): Promise<number> {
  const acl = kafkaAcls();
  await kafka.withAdmin((admin) => admin.createAcls({ acl }));
  return acl.length;
}
