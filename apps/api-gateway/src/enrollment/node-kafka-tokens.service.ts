import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter } from 'prom-client';
import { AgentKafkaTokenView, NODE_ID_PATTERN, nodeCommandGroup, nodeKafkaPrincipal } from '@gantry/contracts';
import { judgeKafkaTokenRequest } from '@gantry/domain';
import { KafkaConnection, NodeKafkaAccess, kafkaTokenRequestSigned } from '@gantry/messaging';
import { RateLimitBuckets, autocommit, findEnrollment } from '@gantry/persistence';
import { ApiError, ErrorCode, Logger } from '@gantry/platform';
import { CONFIG, KAFKA, NodeCredentialDirectory, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import { GatewayEnv } from '../config';
import { RateDecision, RateLimits, TokenRateLimiter } from '../rate-limit/token-rate-limiter';
import { AgentKafkaTokenSigner } from './agent-kafka-token-signer';

const tokens = new Counter({
  name: 'gantry_agent_kafka_tokens_total',
  help: 'Kafka token requests of nodes (ADR 0034): issued, or refused and why (unknown-node, revoked, bad-signature, clock-skew, replayed, rate-limited)',
  labelNames: ['outcome'],
});

/**
 * A node asks once per half token life (and again after a restart); more than this is refused
 * with 429. Shared by every gateway replica (Redis buckets, ADR 0016).
 */
const PER_NODE: RateLimits = { ratePerS: 1, burst: 10 };

/**
 * Real agents' Kafka identities (ADR 0034). A node that proves its credential (a fresh signature,
 * each accepted once) gets a token for its enrollment generation's principal, and that principal
 * its one group ACL, written the first time it asks in this process. Revoking or enrolling again
 * removes the node's group ACLs at once: the old principal can no longer join, commit for or leave
 * the node's group, and its connections end with its last token (it gets no new one).
 * Who is enrolled is read from memory (NodeCredentialDirectory), so a request costs a Map lookup and
 * an HMAC before it costs anything else; refusals that a moment-old enrollment could explain read
 * what changed (at most ten times a second) and look once more. A request that passes is checked
 * once more against the database after its ACL is granted: a replica's memory may not have seen a
 * revocation yet, and must never hand out a token, or put back an ACL, for a revoked node.
 */
@Injectable()
export class NodeKafkaTokens {
  private readonly signer: AgentKafkaTokenSigner | null;
  private readonly access: NodeKafkaAccess | null;
  private readonly limiter: TokenRateLimiter;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: GatewayEnv,
    private readonly directory: NodeCredentialDirectory,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(KAFKA) kafka: KafkaConnection,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {
    const key = config.GANTRY_AGENT_KAFKA_TOKEN_KEY;
    this.signer = key ? new AgentKafkaTokenSigner(key) : null;
    this.access = key ? new NodeKafkaAccess(kafka) : null;
    this.limiter = new TokenRateLimiter(new RateLimitBuckets(redis));
  }

  /** Whether this gateway issues tokens (GANTRY_AGENT_KAFKA_TOKEN_KEY is set): nodes are then their own Kafka principals. */
  get enabled(): boolean {
    return this.signer !== null;
  }

  /** A token for the node that signed `signature` over (nodeId, at), with the RateLimit-* figures of its answer. */
  async issue(nodeId: string, at: number, signature: string | undefined, now = Date.now()): Promise<{ view: AgentKafkaTokenView; rate: RateDecision }> {
    if (!this.signer || !this.access)
      throw new ApiError(ErrorCode.NOT_FOUND, 'this gateway issues no Kafka tokens (GANTRY_AGENT_KAFKA_TOKEN_KEY is unset): agents connect without SASL');
    if (signature === undefined || !/^v1=[0-9a-f]{64}$/.test(signature))
      throw this.refuse('bad-signature', 'header gantry-signature must be v1= and 64 lowercase hex digits');
    if (!NODE_ID_PATTERN.test(nodeId)) throw this.refuse('unknown-node', 'not a node id');
    const judge = () =>
      judgeKafkaTokenRequest(
        this.directory.enrollmentOf(nodeId),
        {
          at,
          signedBy: () => {
            const found = this.directory.keyOf(nodeId);
            return 'key' in found && kafkaTokenRequestSigned(nodeId, at, signature, found.key);
          },
        },
        now,
        this.config.GANTRY_CLOCK_SKEW_MS,
      );
    let verdict = judge();
    if ('refused' in verdict && verdict.refused !== 'clock-skew') {
      await this.directory.refreshSoon();
      verdict = judge();
    }
    if ('refused' in verdict) throw this.refuse(verdict.refused, `node ${nodeId}`);
    const rate = await this.limiter.take(`node-kafka-token:${nodeId}`, PER_NODE);
    if (!rate.allowed) {
      tokens.inc({ outcome: 'rate-limited' });
      throw new ApiError(ErrorCode.RATE_LIMITED, `node ${nodeId} asks for Kafka tokens too often; try again in ${rate.retryAfterS} s`).retryAfter(
        rate.retryAfterS!,
      );
    }
    // Each signature once: within the skew window a recorded request would otherwise be as good as the node.
    const first = await this.redis.set(
      `gantry:kafka-token-proof:${nodeId}:${signature.slice(3)}`,
      '1',
      'PX',
      2 * this.config.GANTRY_CLOCK_SKEW_MS + 1000,
      'NX',
    );
    if (first !== 'OK') throw this.refuse('replayed', `node ${nodeId}: this signature was used before`);
    const { generation } = verdict.grant;
    await this.kafkaCall(() => this.access!.grant(nodeId, generation), `give node ${nodeId} its group ACL`);
    // The memory above may be a moment old (another replica revoked or enrolled the node again): the
    // database decides, after the grant, so that a revocation whose ACL delete ran before this grant
    // still wins (a revocation writes the row, then deletes; this grants, then reads the row).
    const now2 = await findEnrollment(autocommit(this.ds), nodeId);
    if (!now2 || now2.revoked || now2.generation !== generation) {
      await this.revokeAccess([nodeId]);
      throw this.refuse(now2 && !now2.revoked ? 'bad-signature' : 'revoked', `node ${nodeId}`);
    }
    const principal = nodeKafkaPrincipal(nodeId, generation);
    const { token, expiresAt } = await this.signer.sign(principal, now, this.config.GANTRY_AGENT_KAFKA_TOKEN_TTL_MS);
    tokens.inc({ outcome: 'issued' });
    return { view: { token, expiresAt: new Date(expiresAt).toISOString(), principal, groupId: nodeCommandGroup(nodeId) }, rate };
  }

  /** Takes every group ACL of these nodes' principals away (revocation, rotation); nothing when tokens are off. */
  async revokeAccess(nodeIds: string[]): Promise<void> {
    if (!this.access || nodeIds.length === 0) return;
    await this.kafkaCall(
      () => this.access!.revoke(nodeIds),
      `remove the group ACLs of ${nodeIds.length === 1 ? `node ${nodeIds[0]}` : `${nodeIds.length} nodes`}`,
    );
  }

  private refuse(reason: string, detail: string): ApiError {
    tokens.inc({ outcome: reason });
    return new ApiError(ErrorCode.UNAUTHENTICATED, `Kafka token refused (${reason}): ${detail}`);
  }

  private async kafkaCall(fn: () => Promise<void>, what: string): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, `could not ${what}`);
      throw new ApiError(ErrorCode.UNAVAILABLE, `Kafka did not let the gateway ${what}; try again`).retryAfter(1);
    }
  }
}
