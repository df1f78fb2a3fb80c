import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter, Histogram } from 'prom-client';
import { HeartbeatMessage, TelemetryBeat, hasTelemetry } from '@gantry/contracts';
import { BeatCursor, NodeTopology, judgeBeat, topologyOf, topologySignature, utilisationContribution } from '@gantry/domain';
import { NodeLiveStore, nodeLiveStoreFor, recordReportedTopology } from '@gantry/persistence';
import { CONFIG, REDIS } from '@gantry/runtime';
import { IngesterEnv } from './config';

const beatsIngested = new Counter({ name: 'gantry_heartbeats_ingested_total', help: 'Heartbeats written to Redis (the newest of their node in their batch)' });
const beatsRepeated = new Counter({
  name: 'gantry_heartbeats_repeated_total',
  help: 'Heartbeats read again (Kafka redelivery after a restart or rebalance), skipped',
});
const beatsRaced = new Counter({
  name: 'gantry_heartbeats_raced_total',
  help: 'Heartbeats not written because another writer moved their node on first (a rebalance)',
});
const ingestLag = new Histogram({
  name: 'gantry_heartbeat_ingest_lag_seconds',
  help: "From the broker's receive time (LogAppendTime) to written in Redis, per beat written",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 10],
});
const batchSize = new Histogram({
  name: 'gantry_heartbeat_batch_size',
  help: 'Heartbeats per Kafka batch',
  buckets: [1, 10, 50, 100, 250, 500, 1000, 2500, 5000],
});
const writeSeconds = new Histogram({
  name: 'gantry_heartbeat_batch_write_seconds',
  help: 'Time to write one batch (Postgres topology + Redis pipeline)',
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
});
const telemetryBeats = new Counter({
  name: 'gantry_heartbeats_with_telemetry_total',
  help: 'Heartbeats with telemetry, the newest per node in each batch (the rest are liveness beats, ADR 0010)',
});
const topologyWrites = new Counter({ name: 'gantry_node_topology_writes_total', help: 'Node registrations and topology changes written to Postgres' });
const inventoryExceeded = new Counter({
  name: 'gantry_node_inventory_exceeded_total',
  help: 'Topology changes recorded in which a node reported more than its pinned inventory (more GPUs, cores or memory, or another address): counted, never believed (ADR 0035)',
  labelNames: ['resource'],
});

/** One heartbeat as consumed: its offset places it in receive order. */
export interface ReceivedBeat {
  value: HeartbeatMessage;
  offset: string;
  /** The broker's receive time (ms). */
  timestamp: number;
}

/** What a batch came to: the beats refused as replays (the caller parks and counts them). */
export interface BeatBatchResult {
  replayed: Array<{ beat: ReceivedBeat; why: 'seq-not-higher' | 'old-boot' }>;
}

/** Beat cursors kept in memory at most (a fleet's worth); past it the oldest are dropped and read again from Redis when needed. */
const MAX_CURSORS = 200_000;

/**
 * Writes a batch of heartbeats: live state and liveness to Redis in one pipeline, and topology to
 * Postgres only for nodes that are new or changed (a per-process cache of signatures keeps the
 * durable store out of the 10,000 beats/s path; a node Redis did not know is written to it again).
 * Which beat of a node is newest is judgeBeat's call (receive order), made against the node's
 * cursor: kept in memory for the nodes of this replica's partitions, read from Redis when missing,
 * and written with the beat under a compare-and-set, so two replicas during a rebalance cannot both
 * move a node on.
 */
@Injectable()
export class HeartbeatBatchWriter {
  private readonly live: NodeLiveStore;
  private readonly knownTopology = new Map<string, string>();
  private readonly cursors = new Map<string, BeatCursor>();

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) config: IngesterEnv,
  ) {
    // Live state outlives the dead timeout so the detector and the read side can still see it.
    this.live = nodeLiveStoreFor(redis, config.GANTRY_NODE_DEAD_MS);
  }

  async write(beats: ReceivedBeat[], receivedAt = Date.now()): Promise<BeatBatchResult> {
    batchSize.observe(beats.length);
    const timer = writeSeconds.startTimer();
    // The cursor of every node in the batch (memory, else Redis). A node another writer moved on
    // meanwhile (a rebalance), or whose live state was removed (DELETE /v1/nodes/{id}), loses the
    // compare-and-set: its beats are judged once more, against what Redis holds now.
    let pending = beats;
    let from = await this.cursorsOf([...new Set(beats.map((b) => b.value.nodeId))]);
    const replayed: BeatBatchResult['replayed'] = [];
    const registered = new Set<string>();
    for (let round = 0; ; round++) {
      // A second round does not write again the topology the first wrote: the node may have been
      // removed in between, and one beat must not register it twice.
      const outcome = await this.judgeAndWrite(pending, from, receivedAt, registered);
      replayed.push(...outcome.replayed.filter((r) => !outcome.lost.has(r.beat.value.nodeId)));
      if (outcome.lost.size === 0 || round === 1) {
        replayed.push(...outcome.replayed.filter((r) => outcome.lost.has(r.beat.value.nodeId)));
        beatsRaced.inc(outcome.lost.size);
        break;
      }
      pending = pending.filter((b) => outcome.lost.has(b.value.nodeId));
      from = await this.live.beatCursors([...outcome.lost]);
    }
    timer();
    return { replayed };
  }

  /** Judges beats against `from` and writes each node's newest; returns the replays and the nodes whose write lost its compare-and-set. */
  private async judgeAndWrite(
    beats: ReceivedBeat[],
    from: Map<string, BeatCursor>,
    receivedAt: number,
    registered: Set<string>,
  ): Promise<{ replayed: BeatBatchResult['replayed']; lost: Set<string> }> {
    // 1. Judge each beat in receive order: the newest per node is written, its newest telemetry
    //    kept (a liveness beat after a telemetry beat must not drop that telemetry, ADR 0010).
    const cursor = new Map(from);
    const newest = new Map<string, ReceivedBeat>();
    const telemetry = new Map<string, TelemetryBeat>();
    const result: BeatBatchResult = { replayed: [] };
    const lost = new Set<string>();
    for (const b of beats) {
      const verdict = judgeBeat(cursor.get(b.value.nodeId) ?? null, b.value, b.offset);
      if (verdict.kind === 'repeat') beatsRepeated.inc();
      if (verdict.kind === 'replayed') result.replayed.push({ beat: b, why: verdict.why });
      if (verdict.kind !== 'newer') continue;
      cursor.set(b.value.nodeId, verdict.cursor);
      newest.set(b.value.nodeId, b);
      if (hasTelemetry(b.value)) telemetry.set(b.value.nodeId, b.value);
    }
    // 2. Topology first: a node must exist in Postgres before it can be placed on. Only a beat with
    //    telemetry says what the node has, so a node is registered by its first such beat.
    const changed: NodeTopology[] = [];
    for (const b of telemetry.values()) {
      const t = topologyOf(b);
      if (this.knownTopology.get(t.id) !== topologySignature(t) && !registered.has(t.id)) changed.push(t);
    }
    if (changed.length > 0) {
      await this.recordTopology(changed, receivedAt);
      for (const t of changed) {
        this.knownTopology.set(t.id, topologySignature(t));
        registered.add(t.id);
      }
    }
    // 3. Live state, liveness and the node's share of the cluster sums, one pipeline, each node
    //    only if its stored cursor is still the one judged against. Telemetry is kept as the
    //    latest value only (overwritten, never durable): see ADR 0006 and 0010.
    const writes = [...newest.values()];
    const { written, firstSeen } = await this.live.recordBeats(
      writes.map(({ value: b }) => {
        const t = telemetry.get(b.nodeId);
        const was = from.get(b.nodeId) ?? null;
        const next = cursor.get(b.nodeId)!;
        return {
          nodeId: b.nodeId,
          bootId: b.bootId,
          seq: b.seq,
          sentAt: b.sentAt,
          receivedAt,
          running: JSON.stringify(b.running),
          expected: was && { bootId: was.bootId, seq: was.seq },
          pastBoots: next.pastBoots,
          offset: next.offset,
          ...(t && {
            telemetry: JSON.stringify({ gpus: t.gpus, cpu: t.cpu, memory: t.memory }),
            telemetryAt: t.sentAt,
            contribution: utilisationContribution(t.gpus, t.cpu.utilization),
          }),
        };
      }),
    );
    // 4. Redis held nothing for these nodes (new, expired, removed by DELETE /v1/nodes/{id}, or Redis
    //    restarted), so the cache may be wrong about Postgres: their topology is written again now if
    //    this batch has it, else with their next beat that does. That registers a removed node anew
    //    and rewrites nothing for a node that is still there.
    const recheck: NodeTopology[] = [];
    const writtenNow = new Set(changed.map((c) => c.id));
    for (const id of firstSeen) {
      this.knownTopology.delete(id);
      const t = telemetry.get(id);
      if (t && !writtenNow.has(id) && !registered.has(id)) recheck.push(topologyOf(t));
    }
    if (recheck.length > 0) {
      await this.recordTopology(recheck, receivedAt);
      for (const t of recheck) this.knownTopology.set(t.id, topologySignature(t));
    }
    const now = Date.now();
    writes.forEach((b, i) => {
      if (written[i]) {
        this.remember(b.value.nodeId, cursor.get(b.value.nodeId)!);
        ingestLag.observe(Math.max(0, now - b.timestamp) / 1000);
      } else {
        this.cursors.delete(b.value.nodeId);
        lost.add(b.value.nodeId);
      }
    });
    beatsIngested.inc(written.filter(Boolean).length);
    telemetryBeats.inc(telemetry.size);
    return { replayed: result.replayed, lost };
  }

  /** Writes reported topologies (pinning first reports, believing the lesser of pinned and reported: ADR 0035) and counts what was written. */
  private async recordTopology(reports: NodeTopology[], receivedAt: number): Promise<void> {
    const written = await recordReportedTopology(this.ds, reports, new Date(receivedAt));
    topologyWrites.inc(written.length);
    for (const w of written) for (const resource of w.exceeded) inventoryExceeded.inc({ resource });
  }

  /** Forgets the cursors of nodes whose partitions this replica no longer reads (their next reader moves them on). */
  forgetCursors(): void {
    this.cursors.clear();
  }

  private async cursorsOf(nodeIds: string[]): Promise<Map<string, BeatCursor>> {
    const out = new Map<string, BeatCursor>();
    const missing: string[] = [];
    for (const id of nodeIds) {
      const c = this.cursors.get(id);
      if (c) out.set(id, c);
      else missing.push(id);
    }
    for (const [id, c] of await this.live.beatCursors(missing)) out.set(id, c);
    return out;
  }

  private remember(nodeId: string, c: BeatCursor): void {
    this.cursors.delete(nodeId); // re-insert: the map's order is then least recently written first
    this.cursors.set(nodeId, c);
    if (this.cursors.size > MAX_CURSORS) this.cursors.delete(this.cursors.keys().next().value!);
  }
}
