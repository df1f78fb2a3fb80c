import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter, Histogram } from 'prom-client';
import { HeartbeatMessage, hasTelemetry, newestBeatPerNode } from '@gantry/contracts';
import { NodeTopology, topologyOf, topologySignature, utilisationContribution } from '@gantry/domain';
import { NodeLiveStore, autocommit, nodeLiveStoreFor, upsertNodeTopology } from '@gantry/persistence';
import { CONFIG, REDIS } from '@gantry/runtime';
import { IngesterEnv } from './config';

const beatsIngested = new Counter({ name: 'gantry_heartbeats_ingested_total', help: 'Heartbeats written to Redis (newer than the stored one)' });
const beatsStale = new Counter({ name: 'gantry_heartbeats_stale_total', help: 'Heartbeats older than the stored one, ignored' });
const ingestLag = new Histogram({
  name: 'gantry_heartbeat_ingest_lag_seconds',
  help: 'Agent sentAt to written in Redis, per beat written',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10],
});
const batchSize = new Histogram({ name: 'gantry_heartbeat_batch_size', help: 'Heartbeats per Kafka batch', buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000] });
const writeSeconds = new Histogram({ name: 'gantry_heartbeat_batch_write_seconds', help: 'Time to write one batch (Postgres topology + Redis pipeline)', buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1] });
const telemetryBeats = new Counter({ name: 'gantry_heartbeats_with_telemetry_total', help: 'Heartbeats with telemetry, the newest per node in each batch (the rest are liveness beats, ADR 0010)' });
const topologyWrites = new Counter({ name: 'gantry_node_topology_writes_total', help: 'Node registrations and topology changes written to Postgres' });

/**
 * Writes a batch of heartbeats: live state and liveness to Redis in one pipeline, and topology to
 * Postgres only for nodes that are new or changed (a per-process cache of signatures keeps the
 * durable store out of the 10,000 beats/s path).
 */
@Injectable()
export class HeartbeatBatchWriter {
  private readonly live: NodeLiveStore;
  private readonly knownTopology = new Map<string, string>();

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) config: IngesterEnv,
  ) {
    // Live state outlives the dead timeout so the detector and the read side can still see it.
    this.live = nodeLiveStoreFor(redis, config.GANTRY_NODE_DEAD_MS);
  }

  async write(beats: HeartbeatMessage[], receivedAt = Date.now()): Promise<void> {
    batchSize.observe(beats.length);
    const timer = writeSeconds.startTimer();
    // 1. Keep only the newest beat per node in this batch, and the newest telemetry: a liveness beat
    //    that follows a telemetry beat in one batch must not drop that telemetry (ADR 0010).
    const newest = newestBeatPerNode(beats);
    const telemetry = newestBeatPerNode(beats.filter(hasTelemetry));
    // 2. Topology first: a node must exist in Postgres before it can be placed on. Only a beat with
    //    telemetry says what the node has, so a node is registered by its first such beat.
    const changed: NodeTopology[] = [];
    for (const b of telemetry.values()) {
      const t = topologyOf(b);
      if (this.knownTopology.get(t.id) !== topologySignature(t)) changed.push(t);
    }
    if (changed.length > 0) {
      topologyWrites.inc(await upsertNodeTopology(autocommit(this.ds), changed, new Date(receivedAt)));
      for (const t of changed) this.knownTopology.set(t.id, topologySignature(t));
    }
    // 3. Live state, liveness and the node's share of the cluster sums, one pipeline. Telemetry is
    //    kept as the latest value only (overwritten, never durable): see ADR 0006 and 0010.
    const written = await this.live.recordBeats(
      [...newest.values()].map((b) => {
        const t = telemetry.get(b.nodeId);
        return {
          nodeId: b.nodeId, bootId: b.bootId, seq: b.seq, sentAt: b.sentAt, receivedAt,
          running: JSON.stringify(b.running),
          ...(t && { telemetry: JSON.stringify({ gpus: t.gpus, cpu: t.cpu, memory: t.memory }), telemetryAt: t.sentAt, contribution: utilisationContribution(t.gpus, t.cpu.utilization) }),
        };
      }),
    );
    beatsIngested.inc(written);
    beatsStale.inc(beats.length - written);
    telemetryBeats.inc(telemetry.size);
    const now = Date.now();
    for (const b of newest.values()) ingestLag.observe(Math.max(0, now - b.sentAt) / 1000);
    timer();
  }
}

