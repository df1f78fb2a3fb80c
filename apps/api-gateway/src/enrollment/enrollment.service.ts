import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AgentKafkaView, NODE_ID_PATTERN, NodeInventoryDto, nodeCommandGroup, nodeKafkaPrincipal } from '@gantry/contracts';
import { NodeInventory } from '@gantry/domain';
import { CommandSigner, WakeUpSender } from '@gantry/messaging';
import { autocommit, declareInventories, enrollNodes, inTransaction, revokeNodeEnrollment } from '@gantry/persistence';
import { ApiError, ErrorCode, requiredSetting } from '@gantry/platform';
import { COMMAND_SIGNER, CONFIG, SCHEDULER_WAKE, deriveNodeCredential } from '@gantry/runtime';
import { AuditLog } from '../audit/audit-log';
import { Principal } from '../auth/principal';
import { GatewayEnv } from '../config';
import { NodeKafkaTokens } from './node-kafka-tokens.service';

/**
 * Node identity (contract 4.1): enrolling a node gives it a credential, derived from the node id,
 * a generation and the control plane's secret, so nothing secret is stored; enrolling again bumps
 * the generation (rotation: the old credential stops verifying); revoking stops everything the
 * node sends from changing anything. The ingester and reconciler follow within a second. Both
 * also take away the node's Kafka group access (ADR 0034): its old principal can no longer touch
 * the node's command group, and gets no new token. An enrollment may declare the node's inventory
 * (ADR 0035): pinned, replacing any pinned before, in the same transaction.
 */
@Injectable()
export class EnrollmentService {
  private readonly secret: string;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    @Inject(COMMAND_SIGNER) private readonly signer: CommandSigner,
    @Inject(SCHEDULER_WAKE) private readonly schedulerWake: WakeUpSender,
    private readonly audit: AuditLog,
    private readonly kafkaTokens: NodeKafkaTokens,
  ) {
    this.secret = requiredSetting(config, 'GANTRY_NODE_CREDENTIAL_SECRET', 'the gateway enrolls nodes');
  }

  get commandPublicKey(): string {
    return this.signer.publicKeyPem;
  }

  /**
   * Where and as whom an agent connects to Kafka: as its node's own principal, with tokens from
   * POST /v1/nodes/{id}/kafka-token (no password); `node` names the principal and group of one
   * enrollment, absent in a bulk answer.
   */
  agentKafka(node?: { nodeId: string; generation: number }): AgentKafkaView {
    const c = this.config;
    const tokens = this.kafkaTokens.enabled;
    return {
      brokers: (c.GANTRY_AGENT_KAFKA_BROKERS ?? c.KAFKA_BROKERS).split(','),
      mechanism: tokens ? 'oauthbearer' : null,
      username: tokens && node ? nodeKafkaPrincipal(node.nodeId, node.generation) : null,
      password: null,
      groupId: node ? nodeCommandGroup(node.nodeId) : null,
    };
  }

  async enroll(nodeIds: string[], who: Principal, declared?: NodeInventoryDto): Promise<Array<{ nodeId: string; credential: string; generation: number }>> {
    for (const id of nodeIds)
      if (!NODE_ID_PATTERN.test(id)) throw new ApiError(ErrorCode.NOT_FOUND, `node id ${JSON.stringify(id.slice(0, 260))} is not a valid node id`);
    const ids = [...new Set(nodeIds)];
    // Written in id order: every writer of enrollments and node rows locks them in that order (node-inventory.ts).
    const sorted = [...ids].sort();
    const inventory = declared ? declaredInventory(declared) : null;
    const now = new Date();
    const generations = await inTransaction(this.ds, async (sql) => {
      const enrolled = await enrollNodes(sql, sorted, now);
      if (inventory)
        await declareInventories(
          sql,
          sorted.map((nodeId) => ({ nodeId, inventory })),
          now,
        );
      return enrolled;
    });
    // A declaration may have given registered nodes capacity they were not credited with.
    if (inventory) this.schedulerWake.signal('CAPACITY_RELEASED');
    // One entry per request: a fleet of 1,000 enrolled at once is one operator action.
    await this.audit.record(who, 'nodes.enroll', ids.length === 1 ? ids[0] : `${ids.length} nodes`, {
      nodeIds: ids.slice(0, 1000),
      generations: ids.map((id) => generations.get(id)),
      ...(inventory ? { inventory } : {}),
    });
    // The earlier generations' principals lose the node's group (a 503 if Kafka cannot be told: enrolling
    // again retries it). A first enrollment has none: a fresh simulated fleet costs no Kafka call.
    await this.kafkaTokens.revokeAccess(ids.filter((id) => generations.get(id)! > 1));
    return ids.map((nodeId) => ({
      nodeId,
      credential: deriveNodeCredential(this.secret, nodeId, generations.get(nodeId)!),
      generation: generations.get(nodeId)!,
    }));
  }

  async revoke(nodeId: string, who: Principal): Promise<void> {
    const found = NODE_ID_PATTERN.test(nodeId) && (await revokeNodeEnrollment(autocommit(this.ds), nodeId, new Date()));
    if (!found) throw new ApiError(ErrorCode.NOT_FOUND, `node ${nodeId} was never enrolled`);
    await this.audit.record(who, 'nodes.revokeEnrollment', nodeId);
    // A 503 if Kafka cannot be told; revoking again (harmless) retries it.
    await this.kafkaTokens.revokeAccess([nodeId]);
  }
}

/** A declared inventory as the domain keeps it: absent GPUs and address are null. */
export function declaredInventory(d: NodeInventoryDto): NodeInventory {
  return { gpus: d.gpus ? { model: d.gpus.model, count: d.gpus.count } : null, cpuCores: d.cpuCores, memoryMiB: d.memoryMiB, address: d.address ?? null };
}
