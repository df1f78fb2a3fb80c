import { Counter } from 'prom-client';
import { AgentCommandMessage, TOPICS, parseAgentCommand } from '@gantry/contracts';
import type { KeyObject } from 'node:crypto';
import { BatchConsumer, SIGNATURE_HEADER, activeTraceId, commandSignatureValid, inConsumerSpan, keyedPartitionAssigner } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import { Consumers } from '@gantry/runtime';
import { NodeRuntime } from './node-runtime';

const commandsRead = new Counter({
  name: 'gantry_agent_commands_read_total',
  help: 'Commands this agent read from Kafka, by whether they were for one of its own nodes (the rest share a partition with them)',
  labelNames: ['mine'],
});
const commandsDiscarded = new Counter({
  name: 'gantry_agent_commands_discarded_total',
  help: 'Commands that did not parse or could not be handled, dropped (agents may not write the dead-letter topic)',
});

export interface CommandConsumerOptions {
  /** A real node's own group (only its principal may use it) or a simulated fleet's (ADR 0034). */
  groupId: string;
  nodes: Map<string, NodeRuntime>;
  logger: Logger;
  /** The control plane's command keys: only what one of them signed is carried out. */
  publicKeys: KeyObject[];
  /** Older commands are refused, ms. */
  maxAgeMs: number;
}

/**
 * Reads gantry.agent-commands.v1 and hands each command to the node it names. The group of this
 * agent is given only the partitions that hold its own nodes' commands (keyedPartitionAssigner,
 * the producers' partitioner on nodeId), so what a command costs does not grow with the fleet:
 * it is read by the agents whose nodes share its partition. A simulated fleet of 50,000 nodes
 * shares this one consumer: each message costs one verification, one parse and one Map lookup.
 *
 * A command is carried out only if the control plane signed it (Ed25519, contract 4.1) and it was
 * issued within maxAgeMs; anything else is dropped and counted in gantry_messages_rejected_total
 * (an agent may not write the dead-letter topic). A command that changes something (a RUN that
 * starts an attempt, a KILL that stops one) is handled in a consumer span continuing the
 * producer's trace and logged at info with its trace id; a repeat only at debug.
 */
export function createCommandConsumer(consumers: Consumers, o: CommandConsumerOptions): BatchConsumer<AgentCommandMessage> {
  const { nodes, logger } = o;
  let lastWarnAt = 0;
  const warnRarely = (obj: object, msg: string) => {
    // One warning a second at most: a flood of forged commands must not flood the log too.
    if (Date.now() - lastWarnAt < 1_000) return;
    lastWarnAt = Date.now();
    logger.warn(obj, msg);
  };
  return consumers.create<AgentCommandMessage>('command-consumer', {
    groupId: o.groupId,
    topic: TOPICS.agentCommands,
    fromBeginning: false, // a restarted agent resumes from its committed offset; missed commands are repeated by the control plane
    partitionAssigner: [keyedPartitionAssigner(() => nodes.keys())],
    // Another node's command in one of our partitions: skipped before any verification or parsing.
    relevant: (m) => {
      const mine = m.key !== null && nodes.has(m.key);
      commandsRead.inc({ mine: String(mine) });
      return mine;
    },
    authenticate: (m) => {
      if (m.headers[SIGNATURE_HEADER] === undefined) return { reason: 'unsigned' };
      if (m.value === null || !commandSignatureValid(m.value, m.headers[SIGNATURE_HEADER], o.publicKeys)) return { reason: 'bad-signature' };
      return null;
    },
    parse: parseAgentCommand,
    admit: (item) => {
      if (item.key !== item.value.nodeId) return { reason: 'node-mismatch', detail: `key ${item.key} names another node than ${item.value.nodeId}` };
      const age = Date.now() - item.value.issuedAt;
      if (age > o.maxAgeMs) return { reason: 'expired', detail: `issued ${age} ms ago` };
      return null;
    },
    handleBatch: async (items) => {
      for (const item of items) {
        const cmd = item.value;
        const node = nodes.get(cmd.nodeId);
        if (!node) continue;
        const line = { type: cmd.type, jobId: cmd.jobId, attempt: cmd.attempt, nodeId: cmd.nodeId };
        if (!node.changedBy(cmd)) {
          if (logger.isLevelEnabled('debug')) logger.debug({ ...line, repeated: true }, 'command');
          node.handle(cmd);
          continue;
        }
        inConsumerSpan(item.headers, `agent ${cmd.type}`, { 'gantry.job_id': cmd.jobId, 'gantry.node_id': cmd.nodeId }, () => {
          logger.info({ ...line, traceId: activeTraceId() }, 'command');
          node.handle(cmd);
        });
      }
      return [];
    },
    noDeadLetters: true,
    onDiscarded: (letters) => {
      const refused = letters.filter((l) => l.reason.startsWith('rejected:'));
      commandsDiscarded.inc(letters.length - refused.length);
      warnRarely({ count: letters.length, reasons: letters.slice(0, 3).map((l) => l.reason) }, 'commands dropped');
    },
    partitionsConsumedConcurrently: 12,
  });
}
