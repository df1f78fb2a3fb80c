import { AgentCommandMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { BatchConsumer, activeTraceId, withConsumerSpan } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import { Consumers } from '@gantry/runtime';
import { NodeRuntime } from './node-runtime';

/**
 * Reads gantry.agent-commands.v1 and hands each command to the node it names; commands for other
 * nodes are skipped. One consumer group per agent process, so every agent sees every partition.
 * A simulated fleet of 50,000 nodes shares this one consumer: each message costs one parse and one
 * Map lookup, whatever the fleet size; no node reads the stream itself.
 */
export function createCommandConsumer(consumers: Consumers, agentId: string, nodes: Map<string, NodeRuntime>, logger: Logger): BatchConsumer<AgentCommandMessage> {
  return consumers.create<AgentCommandMessage>('command-consumer', {
    groupId: `gantry-agent-${agentId}`,
    topic: TOPICS.agentCommands,
    fromBeginning: false, // a restarted agent resumes from its committed offset; missed commands are repeated by the control plane
    parse: (raw) => parseMessage(AgentCommandMessage, raw),
    handleBatch: async (items) => {
      for (const item of items) {
        const node = nodes.get(item.value.nodeId);
        if (!node) continue;
        await withConsumerSpan(item.headers, `agent ${item.value.type}`, { 'gantry.job_id': item.value.jobId, 'gantry.node_id': item.value.nodeId }, async () => {
          logger.info({ type: item.value.type, jobId: item.value.jobId, attempt: item.value.attempt, nodeId: item.value.nodeId, traceId: activeTraceId() }, 'command');
          node.handle(item.value);
        });
      }
      return [];
    },
    partitionsConsumedConcurrently: 12,
  });
}
