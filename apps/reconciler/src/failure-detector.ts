import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter, Gauge } from 'prom-client';
import {
  BucketState, EvictionPolicy, HealthTransition, ObservedNode, RackView, RecordedHealth, healthTransitions, holdExpired, ingestionWatermark,
  isPartitioned, nextHoldStarts, planEvictions, silenceMs,
} from '@gantry/domain';
import {
  Leadership, NewNodeEvent, NodeLiveStore, appendNodeEvents, nodeLiveStoreFor, autocommit, holdsLeadership, inTransaction, liveRanksOnNode, loadNodeRacks,
  loadNodesWithLiveWork, loadRecordedHealth, saveRecordedHealth,
} from '@gantry/persistence';
import type { Logger } from '@gantry/platform';
import { CONFIG, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import { AttemptLossApplier } from './attempt-loss-applier';
import { ReconcilerEnv } from './config';
import { LeaderElection } from './leader-election';

const INFO_SINCE_KEY = 'gantry:detector:info-since';
const evictions = new Counter({ name: 'gantry_nodes_evicted_total', help: 'Nodes declared dead whose attempts were ended', labelNames: ['why'] });
const held = new Gauge({ name: 'gantry_nodes_held_for_partition', help: 'Silent nodes not evicted because their rack looks partitioned' });
const deferred = new Gauge({ name: 'gantry_nodes_eviction_deferred', help: 'Dead nodes waiting for the eviction rate limit' });
const stalled = new Counter({ name: 'gantry_detector_rounds_skipped_total', help: 'Detector rounds that judged nobody', labelNames: ['why'] });
const transitions = new Counter({ name: 'gantry_node_health_transitions_total', help: 'Node health changes recorded as node events', labelNames: ['to', 'reason'] });

export interface DetectorRound {
  judged: boolean;
  evicted: string[];
  heldForPartition: string[];
  deferred: string[];
  /** Health changes recorded this round (one node event each). */
  transitions: HealthTransition[];
}

/**
 * Finds nodes that have been silent past GANTRY_NODE_DEAD_MS and ends their attempts, on the
 * leader only. Silence is measured against the ingestion watermark, from when Redis last started
 * (its data is not durable) and never in the first suspect period after taking the lead, so the
 * control plane's own outages never read as node deaths. Evictions are rate-limited and a rack
 * that went silent as a whole is held as a suspected partition, for GANTRY_PARTITION_HOLD_MS at
 * most (docs/adr/0007). Every change of a node's health is recorded, once, as a node event.
 */
@Injectable()
export class FailureDetector implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly live: NodeLiveStore;
  private timer: NodeJS.Timeout | null = null;
  private bucket: BucketState;
  private leadingSince: { epoch: number; at: number } | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private readonly policy: EvictionPolicy;
  /** Health as last recorded (node_health), loaded when this replica takes the lead. */
  private recorded = new Map<string, RecordedHealth>();
  /** When each node of a partitioned rack was first held. */
  private holdStarts = new Map<string, number>();

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(CONFIG) private readonly config: ReconcilerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    private readonly election: LeaderElection,
    private readonly losses: AttemptLossApplier,
  ) {
    this.live = nodeLiveStoreFor(redis, config.GANTRY_NODE_DEAD_MS);
    this.policy = {
      minRackSize: config.GANTRY_PARTITION_MIN_RACK,
      partitionShare: config.GANTRY_PARTITION_SHARE,
      evictionsPerSecond: config.GANTRY_EVICTIONS_PER_SECOND,
      burst: config.GANTRY_EVICTION_BURST,
      holdMs: config.GANTRY_PARTITION_HOLD_MS,
    };
    this.bucket = { tokens: this.policy.burst, updatedAt: Date.now() };
  }

  onApplicationBootstrap(): void {
    let busy = false;
    this.timer = setInterval(() => {
      // One round at a time: a slow round (a rack's worth of events) must not overlap the next, or
      // both would diff against the same recorded health and write its changes twice.
      if (busy) return;
      busy = true;
      this.running = this.round()
        .catch((err) => this.logger.warn({ err }, 'failure detector round failed'))
        .finally(() => (busy = false));
    }, this.config.GANTRY_DETECTOR_INTERVAL_MS);
  }

  async round(nowMs = Date.now()): Promise<DetectorRound> {
    const none: DetectorRound = { judged: false, evicted: [], heldForPartition: [], deferred: [], transitions: [] };
    // 1. Only the leader judges, and not until it has led for a suspect period. A new leader
    //    continues from the health its predecessors recorded.
    const leadership = this.election.current();
    if (!leadership) return none;
    if (this.leadingSince?.epoch !== leadership.epoch) {
      this.leadingSince = { epoch: leadership.epoch, at: nowMs };
      this.recorded = await loadRecordedHealth(autocommit(this.ds));
      this.holdStarts = new Map([...this.recorded].filter(([, r]) => r.heldSinceMs !== null).map(([id, r]) => [id, r.heldSinceMs!]));
    }
    if (nowMs - this.leadingSince.at < this.config.GANTRY_NODE_SUSPECT_MS) {
      stalled.inc({ why: 'new_leader' });
      return none;
    }
    // 2. Since when Redis has known anything (it keeps nothing across a restart).
    await this.redis.set(INFO_SINCE_KEY, String(nowMs), 'NX');
    const infoSince = Number(await this.redis.get(INFO_SINCE_KEY));
    // 3. The ingestion watermark: no live ingestion, no judgement.
    const watermark = ingestionWatermark(await this.live.newestBeat(), nowMs, this.config.GANTRY_INGEST_STALL_MS);
    if (watermark === null) {
      stalled.inc({ why: 'ingestion_stalled' });
      return none;
    }
    // 4. Every node's silence, and each rack's share of silence.
    const sql = autocommit(this.ds);
    const [withWork, racksOfNodes, lastSeen] = await Promise.all([loadNodesWithLiveWork(sql), loadNodeRacks(sql), this.live.allLastSeen()]);
    // The fleet-wide read is paged and may miss a node (heardSince): re-read, by id, every node it
    // would count as silent, before anything is judged on it.
    const doubtful = racksOfNodes.map((n) => n.nodeId).filter((id) => silenceMs(lastSeen.get(id) ?? null, watermark, infoSince) >= this.config.GANTRY_NODE_SUSPECT_MS);
    for (const [id, at] of await this.live.lastSeenMany(doubtful)) if (at !== null) lastSeen.set(id, at);
    const silence = (id: string) => silenceMs(lastSeen.get(id) ?? null, watermark, infoSince);
    const dead = (id: string) => silence(id) >= this.config.GANTRY_NODE_DEAD_MS;
    // A rack's silent share counts nodes silent past the suspect timeout, not the dead one: nodes
    // that stop together cross the dead timeout spread over a heartbeat period, and counting only
    // the dead would evict the first half of a partitioned rack before the rest made it a partition.
    const racks = new Map<string, RackView>();
    for (const n of racksOfNodes) {
      const r = racks.get(n.rack) ?? { rack: n.rack, total: 0, silent: 0 };
      r.total++;
      if (silence(n.nodeId) >= this.config.GANTRY_NODE_SUSPECT_MS) r.silent++;
      racks.set(n.rack, r);
    }
    // 5. Holds: a dead node of a partitioned rack keeps the moment it was first held, and stays
    //    held while it is silent (a healing rack's stragglers are not evicted before they beat).
    const partitioned = (rack: string) => isPartitioned(racks.get(rack)!, this.policy);
    this.holdStarts = nextHoldStarts(this.holdStarts, racksOfNodes.filter((n) => dead(n.nodeId) && partitioned(n.rack)).map((n) => n.nodeId), dead, nowMs);
    // 6. Decide (rate limit, partitions) over silent nodes that hold work, longest silence first.
    const candidates = withWork
      .filter((n) => dead(n.nodeId))
      .sort((a, b) => silence(b.nodeId) - silence(a.nodeId))
      .map((n) => ({ ...n, heldSinceMs: this.holdStarts.get(n.nodeId) ?? null }));
    const plan = planEvictions(candidates, racks, this.bucket, nowMs, this.policy);
    this.bucket = plan.bucket;
    held.set(plan.heldForPartition.length);
    deferred.set(plan.deferred.length);
    // 7. Record every health change (and only changes) as node events, fenced by the lease.
    const observed: ObservedNode[] = racksOfNodes.map((n) => {
      const since = this.holdStarts.get(n.nodeId) ?? null;
      return {
        nodeId: n.nodeId, silenceMs: silence(n.nodeId), heardSinceInfoBegan: lastSeen.has(n.nodeId),
        held: since !== null && !holdExpired(since, nowMs, this.policy.holdMs), heldSinceMs: since,
      };
    });
    const changes = healthTransitions(this.recorded, observed, { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS });
    if (!(await this.record(changes, leadership, nowMs))) return { ...none, judged: true };
    // 8. Jobs on nodes newly held, or back from a hold, are told why nothing happened to them.
    const withWorkIds = new Set(withWork.map((n) => n.nodeId));
    for (const c of changes) {
      const reason = c.to.held ? 'NODE_PARTITION_HELD' : c.from.held && c.to.health === 'HEALTHY' ? 'NODE_RETURNED' : null;
      if (!reason || !withWorkIds.has(c.nodeId)) continue;
      for (const rank of await liveRanksOnNode(sql, c.nodeId)) {
        if ((await this.losses.note(rank.jobId, rank.attempt, c.nodeId, reason, leadership)) === 'deposed') return { ...none, judged: true };
      }
    }
    // 9. End every attempt on each evicted node, and say so on the node.
    const expired = new Set(plan.holdExpired);
    for (const nodeId of plan.evict) {
      const why = expired.has(nodeId) ? 'PARTITION_HOLD_EXPIRED' : 'NODE_LOST';
      const outcome = await this.losses.evict(nodeId, await liveRanksOnNode(sql, nodeId), why, leadership, new Date(nowMs));
      if (outcome.deposed) {
        this.logger.warn({ epoch: leadership.epoch }, 'deposed mid-round; stopping');
        return { ...plan, judged: true, evicted: [], transitions: changes };
      }
      evictions.inc({ why });
      this.logger.warn({ nodeId, silenceMs: silence(nodeId), why, jobs: outcome.jobIds.length }, 'node declared dead; its attempts were ended');
    }
    return { judged: true, evicted: plan.evict, heldForPartition: plan.heldForPartition, deferred: plan.deferred, transitions: changes };
  }

  /** Writes the round's health changes (events and recorded health) in one fenced transaction; false if deposed. */
  private async record(changes: HealthTransition[], leadership: Leadership, nowMs: number): Promise<boolean> {
    if (changes.length === 0) return true;
    const at = new Date(nowMs);
    const events: NewNodeEvent[] = changes.map((c) => ({ nodeId: c.nodeId, type: 'HEALTH_CHANGED', at, fromHealth: c.from.health, toHealth: c.to.health, reason: c.reason }));
    const ok = await this.fenced(leadership, async (s) => {
      await appendNodeEvents(s, events, leadership.epoch);
      await saveRecordedHealth(s, changes, at);
    });
    if (!ok) return false;
    for (const c of changes) {
      this.recorded.set(c.nodeId, c.to);
      transitions.inc({ to: c.to.health, reason: c.reason });
    }
    return true;
  }

  private async fenced(leadership: Leadership, write: (sql: Parameters<typeof holdsLeadership>[0]) => Promise<void>): Promise<boolean> {
    return inTransaction(this.ds, async (s) => {
      if (!(await holdsLeadership(s, leadership))) return false;
      await write(s);
      return true;
    });
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
