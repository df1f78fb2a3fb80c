import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter, Gauge } from 'prom-client';
import {
  BucketState,
  EvictionPolicy,
  FleetObservation,
  HealthThresholds,
  HealthTransition,
  RecordedHealth,
  holdNote,
  ingestionWatermark,
  judgeFleet,
  silenceMs,
} from '@gantry/domain';
import {
  Leadership,
  NewNodeEvent,
  NodeLiveStore,
  appendNodeEvents,
  nodeLiveStoreFor,
  autocommit,
  holdsLeadership,
  inTransaction,
  liveRanksOnNode,
  loadNodeRacks,
  loadNodesWithLiveWork,
  loadRecordedHealth,
  saveRecordedHealth,
} from '@gantry/persistence';
import { PeriodicTask, type Logger } from '@gantry/platform';
import { CONFIG, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import { AttemptLossApplier } from './attempt-loss-applier';
import { ReconcilerEnv } from './config';
import { LeaderElection } from './leader-election';

const INFO_SINCE_KEY = 'gantry:detector:info-since';
const evictions = new Counter({ name: 'gantry_nodes_evicted_total', help: 'Nodes declared dead whose attempts were ended', labelNames: ['why'] });
const held = new Gauge({ name: 'gantry_nodes_held_for_partition', help: 'Silent nodes not evicted because their rack looks partitioned' });
const deferred = new Gauge({ name: 'gantry_nodes_eviction_deferred', help: 'Dead nodes waiting for the eviction rate limit' });
const stalled = new Counter({ name: 'gantry_detector_rounds_skipped_total', help: 'Detector rounds that judged nobody', labelNames: ['why'] });
const transitions = new Counter({
  name: 'gantry_node_health_transitions_total',
  help: 'Node health changes recorded as node events',
  labelNames: ['to', 'reason'],
});

export interface DetectorRound {
  judged: boolean;
  evicted: string[];
  heldForPartition: string[];
  deferred: string[];
  /** Health changes recorded this round (one node event each). */
  transitions: HealthTransition[];
}

const NOT_JUDGED: DetectorRound = { judged: false, evicted: [], heldForPartition: [], deferred: [], transitions: [] };

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
  private task: PeriodicTask | null = null;
  private bucket: BucketState;
  private leadingSince: { epoch: number; at: number } | null = null;
  private readonly policy: EvictionPolicy;
  private readonly thresholds: HealthThresholds;
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
    this.thresholds = { suspectMs: config.GANTRY_NODE_SUSPECT_MS, deadMs: config.GANTRY_NODE_DEAD_MS };
    this.bucket = { tokens: this.policy.burst, updatedAt: Date.now() };
  }

  onApplicationBootstrap(): void {
    // One round at a time (PeriodicTask): a slow round (a rack's worth of events) must not overlap
    // the next, or both would diff against the same recorded health and write its changes twice.
    this.task = new PeriodicTask(
      this.config.GANTRY_DETECTOR_INTERVAL_MS,
      () => this.round(),
      (err) => this.logger.warn({ err }, 'failure detector round failed'),
    );
    this.task.start();
  }

  /**
   * 1. Only the leader judges, and not until it has led for a suspect period; a new leader
   *    continues from the health its predecessors recorded.
   * 2. Since when Redis has known anything, and the ingestion watermark: no live ingestion, no judgement.
   * 3. Observe every node's silence against the watermark.
   * 4. Decide (judgeFleet): rack silence, partition holds, evictions through the token bucket, health changes.
   * 5. Record every health change (and only changes) as node events, fenced by the lease.
   * 6. Tell the jobs on nodes newly held, or back from a hold, why nothing happened to them.
   * 7. End every attempt on each evicted node, and say so on the node.
   */
  async round(nowMs = Date.now()): Promise<DetectorRound> {
    const leadership = await this.leadershipToJudge(nowMs);
    if (!leadership) return NOT_JUDGED;
    const clock = await this.clockToJudgeBy(nowMs);
    if (!clock) return NOT_JUDGED;
    const seen = await this.observe(clock);
    const verdict = judgeFleet(seen, { recorded: this.recorded, holdStarts: this.holdStarts, bucket: this.bucket }, nowMs, this.policy, this.thresholds);
    this.holdStarts = verdict.holdStarts;
    this.bucket = verdict.plan.bucket;
    held.set(verdict.plan.heldForPartition.length);
    deferred.set(verdict.plan.deferred.length);
    if (!(await this.record(verdict.transitions, leadership, nowMs))) return { ...NOT_JUDGED, judged: true };
    if (!(await this.noteHolds(verdict.transitions, seen.withWork, leadership))) return { ...NOT_JUDGED, judged: true };
    const { plan } = verdict;
    if (!(await this.evict(plan.evict, new Set(plan.holdExpired), seen.silenceMs, leadership, nowMs))) {
      return { ...plan, judged: true, evicted: [], transitions: verdict.transitions };
    }
    return { judged: true, evicted: plan.evict, heldForPartition: plan.heldForPartition, deferred: plan.deferred, transitions: verdict.transitions };
  }

  /** 1. The leadership to judge under, or null: not the leader, or still in its first suspect period. */
  private async leadershipToJudge(nowMs: number): Promise<Leadership | null> {
    const leadership = this.election.current();
    if (!leadership) return null;
    if (this.leadingSince?.epoch !== leadership.epoch) {
      this.leadingSince = { epoch: leadership.epoch, at: nowMs };
      this.recorded = await loadRecordedHealth(autocommit(this.ds));
      this.holdStarts = new Map([...this.recorded].filter(([, r]) => r.heldSinceMs !== null).map(([id, r]) => [id, r.heldSinceMs!]));
    }
    if (nowMs - this.leadingSince.at < this.config.GANTRY_NODE_SUSPECT_MS) {
      stalled.inc({ why: 'new_leader' });
      return null;
    }
    return leadership;
  }

  /** 2. Since when Redis has known anything (it keeps nothing across a restart), and the ingestion watermark; null when ingestion has stalled. */
  private async clockToJudgeBy(nowMs: number): Promise<{ infoSince: number; watermark: number } | null> {
    await this.redis.set(INFO_SINCE_KEY, String(nowMs), 'NX');
    const infoSince = Number(await this.redis.get(INFO_SINCE_KEY));
    const watermark = ingestionWatermark(await this.live.newestBeat(), nowMs, this.config.GANTRY_INGEST_STALL_MS);
    if (watermark === null) {
      stalled.inc({ why: 'ingestion_stalled' });
      return null;
    }
    return { infoSince, watermark };
  }

  /**
   * 3. Every registered node's silence, and which nodes hold work. The fleet-wide read is paged and
   * may miss a node (heardSince): every node it would count as silent is read again, by id, before
   * anything is judged on it.
   */
  private async observe({ infoSince, watermark }: { infoSince: number; watermark: number }): Promise<FleetObservation> {
    const sql = autocommit(this.ds);
    const [withWork, nodes, lastSeen] = await Promise.all([loadNodesWithLiveWork(sql), loadNodeRacks(sql), this.live.allLastSeen()]);
    const silence = (id: string) => silenceMs(lastSeen.get(id) ?? null, watermark, infoSince);
    const doubtful = nodes.map((n) => n.nodeId).filter((id) => silence(id) >= this.config.GANTRY_NODE_SUSPECT_MS);
    for (const [id, at] of await this.live.lastSeenMany(doubtful)) if (at !== null) lastSeen.set(id, at);
    return { nodes, withWork: new Set(withWork.map((n) => n.nodeId)), silenceMs: silence, heardSinceInfoBegan: (id) => lastSeen.has(id) };
  }

  /** 6. A RECONCILED event for each job on a node newly held or back from a hold; false if deposed. */
  private async noteHolds(changes: HealthTransition[], withWork: ReadonlySet<string>, leadership: Leadership): Promise<boolean> {
    const sql = autocommit(this.ds);
    for (const c of changes) {
      const reason = holdNote(c);
      if (!reason || !withWork.has(c.nodeId)) continue;
      for (const rank of await liveRanksOnNode(sql, c.nodeId)) {
        if ((await this.losses.note(rank.jobId, rank.attempt, c.nodeId, reason, leadership)) === 'deposed') return false;
      }
    }
    return true;
  }

  /** 7. Ends every attempt on each node to evict (NODE_LOST, or PARTITION_HOLD_EXPIRED); false if deposed on the way. */
  private async evict(
    nodeIds: string[],
    holdExpiredIds: ReadonlySet<string>,
    silence: (id: string) => number,
    leadership: Leadership,
    nowMs: number,
  ): Promise<boolean> {
    const sql = autocommit(this.ds);
    for (const nodeId of nodeIds) {
      const why = holdExpiredIds.has(nodeId) ? 'PARTITION_HOLD_EXPIRED' : 'NODE_LOST';
      const outcome = await this.losses.evict(nodeId, await liveRanksOnNode(sql, nodeId), why, leadership, new Date(nowMs));
      if (outcome.deposed) {
        this.logger.warn({ epoch: leadership.epoch }, 'deposed mid-round; stopping');
        return false;
      }
      evictions.inc({ why });
      this.logger.warn({ nodeId, silenceMs: silence(nodeId), why, jobs: outcome.jobIds.length }, 'node declared dead; its attempts were ended');
    }
    return true;
  }

  /** 5. Writes the round's health changes (events and recorded health) in one fenced transaction; false if deposed. */
  private async record(changes: HealthTransition[], leadership: Leadership, nowMs: number): Promise<boolean> {
    if (changes.length === 0) return true;
    const at = new Date(nowMs);
    const events: NewNodeEvent[] = changes.map((c) => ({
      nodeId: c.nodeId,
      type: 'HEALTH_CHANGED',
      at,
      fromHealth: c.from.health,
      toHealth: c.to.health,
      reason: c.reason,
    }));
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
    await this.task?.stop();
  }
}
