import { Inject, Injectable } from '@nestjs/common';
import { HeartbeatMessage, parseHeartbeat, TOPICS } from '@gantry/contracts';
import { HEARTBEAT_FETCH, TerminalFailure } from '@gantry/messaging';
import { CONFIG, Consumers, NodeCredentialDirectory, admitNodeMessage, authenticateNodeMessage, reauthenticateNodeMessages } from '@gantry/runtime';
import { IngesterEnv } from './config';
import { HeartbeatBatchWriter } from './heartbeat-batch-writer';

/**
 * Consumes gantry.heartbeats.v1 in batches, several partitions at once. A beat counts only if its
 * node can prove it sent it (contract 4.1): signed by the enrolled node it names, sent within the
 * skew window of the broker's receive time, and newer in receive order than the node's last beat
 * (a replay is refused). Everything refused is parked on the dead-letter topic and counted in
 * gantry_messages_rejected_total; the reconciler's reader of this topic skips what this one parks.
 */
@Injectable()
export class HeartbeatConsumer {
  constructor(consumers: Consumers, @Inject(CONFIG) config: IngesterEnv, writer: HeartbeatBatchWriter, directory: NodeCredentialDirectory) {
    consumers.create<HeartbeatMessage>('heartbeat-consumer', {
      groupId: 'gantry-heartbeat-ingester',
      topic: TOPICS.heartbeats,
      fromBeginning: false, // an old beat says nothing about liveness now
      reauthenticate: reauthenticateNodeMessages(directory),
      authenticate: authenticateNodeMessage(directory),
      parse: parseHeartbeat,
      admit: admitNodeMessage<HeartbeatMessage>(
        (b) => b.nodeId,
        (b) => b.sentAt,
        config.GANTRY_CLOCK_SKEW_MS,
      ),
      handleBatch: async (items) => {
        const { replayed } = await writer.write(items);
        const byOffset = new Map(items.map((i) => [i.offset, i]));
        return replayed.map(({ beat, why }): TerminalFailure<HeartbeatMessage> => {
          const rejection = {
            reason: 'replayed',
            detail: why === 'old-boot' ? `boot ${beat.value.bootId} was replaced` : `seq ${beat.value.seq} is not above the last`,
          };
          return { item: byOffset.get(beat.offset)!, error: new Error(rejection.detail), rejection };
        });
      },
      onAssignment: () => writer.forgetCursors(),
      partitionsConsumedConcurrently: config.GANTRY_INGEST_CONCURRENCY,
      ...HEARTBEAT_FETCH,
    });
  }
}
