import { KafkaConnection } from './kafka-client';
import { nodeGroupAcl, nodeGroupAclFilter } from './kafka-acls';

/** Filters per DeleteAcls request: a bulk enrollment's nodes (at most 1,000) in one. */
const FILTERS_PER_REQUEST = 1000;

/**
 * The group ACLs of nodes' principals (ADR 0034), written by the gateway: granted when a node
 * first asks for a token in an enrollment generation, removed when the node is revoked or enrolled
 * again. Nodes that never ask (a simulated fleet, which has a principal of its own) get none.
 * The principal names the generation, so an ACL left behind by a crash names a principal that
 * can get no token any more: harmless once the tokens issued before have expired.
 */
export class NodeKafkaAccess {
  /** Nodes whose current generation this process has already granted: one CreateAcls per node and generation, not per token. */
  private readonly granted = new Map<string, number>();

  constructor(private readonly kafka: KafkaConnection) {}

  /** Lets the node's principal of `generation` use its command group (creating an ACL that exists changes nothing). */
  async grant(nodeId: string, generation: number): Promise<void> {
    if (this.granted.get(nodeId) === generation) return;
    await this.kafka.withAdmin((admin) => admin.createAcls({ acl: [nodeGroupAcl(nodeId, generation)] }));
    this.granted.set(nodeId, generation);
  }

  /** Removes every ACL on these nodes' command groups, whichever generation's principal it names. */
  async revoke(nodeIds: string[]): Promise<void> {
    for (const id of nodeIds) this.granted.delete(id);
    for (let i = 0; i < nodeIds.length; i += FILTERS_PER_REQUEST) {
      const filters = nodeIds.slice(i, i + FILTERS_PER_REQUEST).map(nodeGroupAclFilter);
      const res = await this.kafka.withAdmin((admin) => admin.deleteAcls({ filters }));
      const failed = res.filterResponses.find((r) => r.errorCode !== 0);
      if (failed) throw new Error(`the broker refused to delete node group ACLs: error ${failed.errorCode} ${failed.errorMessage ?? ''}`.trim());
    }
  }
}
