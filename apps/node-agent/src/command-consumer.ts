import { AgentCommandMessage, TOPICS, parseAgentCommand } from '@gantry/contracts';
import { BatchConsumer, activeTraceId, inConsumerSpan } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import { Consumers } from '@gantry/runtime';
import { NodeRuntime } from './node-runtime';

/**
 * Reads gantry.agent-commands.v1 and hands each command to the node it names; commands for other
 * nodes are skipped. One consumer group per agent process, so every agent sees every partition.
 * A simulated fleet of 50,000 nodes shares this one consumer: each message costs one parse and one
 * Map lookup, whatever the fleet size; no node reads the stream itself.
 *
 * A command that changes something (a RUN that starts an attempt, a KILL that stops one) is handled
 * in a consumer span continuing the producer's trace and logged at info with its trace id, which
 * its attempt's reports carry on. A repeated command (a no-op, or a re-sent final report) is
 * logged at debug only: the control plane repeats whatever a heartbeat lacks, so at info these
 * would be noise, and a span per repeat would trace nothing new.
 */
export function createCommandConsumer(consumers: Consumers, agentId: string, nodes: Map<string, NodeRuntime>, logger: Logger): BatchConsumer<AgentCommandMessage> {
  return consumers.create<AgentCommandMessage>('command-consumer', {
    groupId: `gantry-agent-${agentId}`,
    topic: TOPICS.agentCommands,
    fromBeginning: false, // a restarted agent resumes from its committed offset; missed commands are repeated by the control plane
    parse: parseAgentCommand,
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
    partitionsConsumedConcurrently: 12,
  });
}
