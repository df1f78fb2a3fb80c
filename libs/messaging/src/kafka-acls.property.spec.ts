import fc from 'fast-check';
import { AclEntry, AclOperationTypes, AclResourceTypes, ResourcePatternTypes } from 'kafkajs';
import { FLEET_GROUP_PREFIX, NODE_ID_PATTERN, fleetCommandGroup, nodeCommandGroup, nodeKafkaPrincipal } from '@gantry/contracts';
import { kafkaAcls, kafkaPrincipal, nodeGroupAcl, nodeGroupAclFilter } from './kafka-acls';

/** Kafka's ACL matching (StandardAuthorizer): a literal name or `*`, a prefix, a principal or User:*. Every ACL here is ALLOW. */
function allows(acls: AclEntry[], principal: string, resourceType: AclResourceTypes, name: string): boolean {
  return acls.some(
    (a) =>
      a.resourceType === resourceType &&
      (a.principal === principal || a.principal === 'User:*') &&
      (a.resourcePatternType === ResourcePatternTypes.PREFIXED ? name.startsWith(a.resourceName) : a.resourceName === name || a.resourceName === '*'),
  );
}

const nodeId = fc.stringMatching(NODE_ID_PATTERN).filter((s) => s.length <= 60);
const generation = fc.integer({ min: 1, max: 1000 });

describe('Kafka ACLs of node principals (ADR 0034)', () => {
  it("never let a node's principal, or the fleet's, use another node's group, nor a rotated generation its own", () => {
    fc.assert(
      fc.property(nodeId, nodeId, generation, generation, fc.integer({ min: 1, max: 5 }), (a, b, ga, gb, back) => {
        fc.pre(a !== b);
        // The broker as the gateway leaves it: the roles' ACLs and each node's current generation's group ACL.
        const acls = [...kafkaAcls(), nodeGroupAcl(a, ga), nodeGroupAcl(b, gb)];
        const group = AclResourceTypes.GROUP;
        expect(allows(acls, `User:${nodeKafkaPrincipal(a, ga)}`, group, nodeCommandGroup(a))).toBe(true);
        expect(allows(acls, `User:${nodeKafkaPrincipal(a, ga)}`, group, nodeCommandGroup(b))).toBe(false);
        expect(allows(acls, `User:${nodeKafkaPrincipal(a, ga + back)}`, group, nodeCommandGroup(a))).toBe(false);
        expect(allows(acls, `User:${kafkaPrincipal('fleet')}`, group, nodeCommandGroup(a))).toBe(false);
        expect(allows(acls, `User:${nodeKafkaPrincipal(a, ga)}`, group, fleetCommandGroup(b))).toBe(false);
        // No node's group falls under the fleet's prefix, whatever its id.
        expect(nodeCommandGroup(a).startsWith(FLEET_GROUP_PREFIX)).toBe(false);
      }),
    );
  });

  it('give User:* topics only: what every node needs, nothing on groups or the cluster', () => {
    const wildcard = kafkaAcls().filter((a) => a.principal === 'User:*');
    expect(wildcard.every((a) => a.resourceType === AclResourceTypes.TOPIC)).toBe(true);
    expect(wildcard.map((a) => [a.resourceName, a.operation]).sort()).toEqual(
      [
        ['gantry.agent-commands.v1', AclOperationTypes.READ],
        ['gantry.heartbeats.v1', AclOperationTypes.WRITE],
        ['gantry.job-reports.v1', AclOperationTypes.WRITE],
      ].sort(),
    );
  });

  it("remove a node's group ACLs whichever generation they name, and only that group's", () => {
    const f = nodeGroupAclFilter('gpu-1');
    expect(f).toMatchObject({
      resourceType: AclResourceTypes.GROUP,
      resourceName: 'gantry-node-gpu-1',
      resourcePatternType: ResourcePatternTypes.LITERAL,
      operation: AclOperationTypes.ANY,
    });
    expect(f.principal).toBeUndefined();
  });
});
