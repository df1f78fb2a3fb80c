import { Kafka, Producer } from 'kafkajs';
import { AgentCommandMessage, TOPICS, parseMessage } from '@gantry/contracts';
import { BatchConsumer, DeadLetterPublisher, activeTraceId, withConsumerSpan } from '@gantry/messaging';
import type { Logger } from '@gantry/platform';
import { NodeRuntime } from './node-runtime';

/**
 * Reads gantry.agent-commands.v1 and hands each command to the node it names; commands for other
 * nodes are skipped. One consumer group per agent process, so every agent sees every partition.
 */
export function createCommandConsumer(kafka: Kafka, producer: Producer, agentId: string, nodes: Map<string, NodeRuntime>, logger: Logger): BatchConsumer<AgentCommandMessage> {
  return new BatchConsumer<AgentCommandMessage>({
    kafka,
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
    deadLetters: new DeadLetterPublisher(producer),
    partitionsConsumedConcurrently: 12,
    logger,
  });
}
