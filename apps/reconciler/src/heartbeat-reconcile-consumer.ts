import { Inject, Injectable } from '@nestjs/common';
import { HeartbeatMessage, TOPICS, parseHeartbeat } from '@gantry/contracts';
import { HEARTBEAT_FETCH } from '@gantry/messaging';
import { CONFIG, Consumers, NodeCredentialDirectory, admitNodeMessage, authenticateNodeMessage, reauthenticateNodeMessages } from '@gantry/runtime';
import { ReconcilerEnv } from './config';
import { NodeReconciler } from './node-reconciler';
import { ReconcilerView } from './reconciler-view';

/**
 * The reconciler's own read of gantry.heartbeats.v1 (a separate consumer group from the ingester's):
 * every beat is a chance to repair what the node lacks. It acts only on beats their node can prove
 * (the same checks as the ingester's); what fails them is parked and counted by the ingester, so
 * it is only skipped here.
 */
@Injectable()
export class HeartbeatReconcileConsumer {
  constructor(
    consumers: Consumers,
    @Inject(CONFIG) config: ReconcilerEnv,
    reconciler: NodeReconciler,
    directory: NodeCredentialDirectory,
    view: ReconcilerView,
  ) {
    consumers.create<HeartbeatMessage>('heartbeat-reconcile-consumer', {
      groupId: 'gantry-reconciler-heartbeats',
      topic: TOPICS.heartbeats,
      fromBeginning: false,
      reauthenticate: reauthenticateNodeMessages(directory),
      authenticate: authenticateNodeMessage(directory),
      parse: parseHeartbeat,
      admit: admitNodeMessage<HeartbeatMessage>(
        (b) => b.nodeId,
        (b) => b.sentAt,
        config.GANTRY_CLOCK_SKEW_MS,
      ),
      handleBatch: async (items) => {
        await reconciler.reconcile(items);
        return [];
      },
      onAssignment: () => reconciler.forgetCursors(),
      onFetch: (at) => view.fetched('heartbeat fetches', at),
      onInterrupted: () => view.interrupted('heartbeat fetches'),
      noDeadLetters: true,
      countRejections: false,
      partitionsConsumedConcurrently: 4,
      ...HEARTBEAT_FETCH,
    });
  }
}
