/**
 * Who a real agent is on Kafka (ADR 0034), for agents written by others too. A node connects with
 * SASL/OAUTHBEARER as a principal of its own, with a token the gateway signs when the node proves
 * its credential (POST /v1/nodes/{id}/kafka-token). The principal names the enrollment's
 * generation, so enrolling again (rotation) or revoking leaves earlier tokens nothing to join. Its
 * one group ACL lets it join, commit and leave exactly its own node's command group.
 */

/** `iss` and `aud` of the tokens; a broker validating them expects these (scripts/kafka/start.sh, deploy/). */
export const AGENT_TOKEN_ISSUER = 'gantry';
export const AGENT_TOKEN_AUDIENCE = 'gantry-kafka';

/** The Kafka principal (the token's `sub`) of a node in one enrollment generation. */
export function nodeKafkaPrincipal(nodeId: string, generation: number): string {
  return `gantry-node-${nodeId}.g${generation}`;
}

/** The consumer group in which a real node's agent reads its commands: only that node's principal may use it. */
export function nodeCommandGroup(nodeId: string): string {
  return `gantry-node-${nodeId}`;
}

/**
 * A simulated fleet's command groups: the fleet's own SCRAM principal may use groups with this
 * prefix, which no node's group has. That principal belongs to the test harness, never to a real node.
 */
export const FLEET_GROUP_PREFIX = 'gantry-fleet-';

export function fleetCommandGroup(agentId: string): string {
  return `${FLEET_GROUP_PREFIX}${agentId}`;
}

/**
 * What a node signs to ask for a token: a context line, its id and the time it asks (epoch ms),
 * so the signature can pass for nothing else (a beat or report value is JSON, never this).
 */
export function kafkaTokenProofData(nodeId: string, at: number): string {
  return `gantry-kafka-token/v1\n${nodeId}\n${at}`;
}
