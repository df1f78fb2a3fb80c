import { Injectable } from '@nestjs/common';
import { HeartbeatMessage, TOPICS, parseHeartbeat } from '@gantry/contracts';
import { Consumers } from '@gantry/runtime';
import { NodeReconciler } from './node-reconciler';

/**
 * The reconciler's own read of gantry.heartbeats.v1 (a separate consumer group from the ingester's):
 * every beat is a chance to repair what the node lacks. Bad messages are dead-lettered by the ingester,
 * so they are only skipped here.
 */
@Injectable()
export class HeartbeatReconcileConsumer {
  constructor(consumers: Consumers, reconciler: NodeReconciler) {
    consumers.create<HeartbeatMessage>('heartbeat-reconcile-consumer', {
      groupId: 'gantry-reconciler-heartbeats',
      topic: TOPICS.heartbeats,
      fromBeginning: false,
      parse: parseHeartbeat,
      handleBatch: async (items) => {
        await reconciler.reconcile(items.map((i) => i.value));
        return [];
      },
      skipDeadLetters: true,
      partitionsConsumedConcurrently: 4,
    });
  }
}
