import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { HeartbeatMessage, parseHeartbeat, TOPICS } from '@gantry/contracts';
import { CONFIG, Consumers } from '@gantry/runtime';
import { IngesterEnv } from './config';
import { HeartbeatBatchWriter } from './heartbeat-batch-writer';

const deadLettered = new Counter({ name: 'gantry_heartbeats_dead_lettered_total', help: 'Heartbeats that did not parse or validate' });
const consumerLag = new Gauge({ name: 'gantry_heartbeat_consumer_lag', help: 'Messages behind the partition head, per partition', labelNames: ['partition'] });

/** Consumes gantry.heartbeats.v1 in batches, several partitions at once. */
@Injectable()
export class HeartbeatConsumer {
  constructor(consumers: Consumers, @Inject(CONFIG) config: IngesterEnv, writer: HeartbeatBatchWriter) {
    consumers.create<HeartbeatMessage>('heartbeat-consumer', {
      groupId: 'gantry-heartbeat-ingester',
      topic: TOPICS.heartbeats,
      fromBeginning: false, // an old beat says nothing about liveness now
      parse: parseHeartbeat,
      handleBatch: async (items) => {
        await writer.write(items.map((i) => i.value));
        return [];
      },
      partitionsConsumedConcurrently: config.GANTRY_INGEST_CONCURRENCY,
      onBatchDone: (s) => {
        deadLettered.inc(s.deadLettered);
        consumerLag.set({ partition: String(s.partition) }, s.lag);
      },
    });
  }
}
