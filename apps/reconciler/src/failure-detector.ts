import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter, Gauge } from 'prom-client';
import { BucketState, EvictionPolicy, RackView, ingestionWatermark, planEvictions, silenceMs } from '@gantry/domain';
import { NodeLiveStore, autocommit, liveRanksOnNode, loadNodeRacks, loadNodesWithLiveWork } from '@gantry/persistence';
import type { Logger } from '@gantry/platform';
import { CONFIG, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import { AttemptLossApplier } from './attempt-loss-applier';
import { ReconcilerEnv } from './config';
import { LeaderElection } from './leader-election';

const INFO_SINCE_KEY = 'gantry:detector:info-since';
const evictions = new Counter({ name: 'gantry_nodes_evicted_total', help: 'Nodes declared dead whose attempts were ended' });
const held = new Gauge({ name: 'gantry_nodes_held_for_partition', help: 'Silent nodes not evicted because their rack looks partitioned' });
const deferred = new Gauge({ name: 'gantry_nodes_eviction_deferred', help: 'Dead nodes waiting for the eviction rate limit' });
const stalled = new Counter({ name: 'gantry_detector_rounds_skipped_total', help: 'Detector rounds that judged nobody', labelNames: ['why'] });

export interface DetectorRound {
  judged: boolean;
  evicted: string[];
  heldForPartition: string[];
  deferred: string[];
}

/**
 * Finds nodes that have been silent past GANTRY_NODE_DEAD_MS and ends their attempts, on the
 * leader only. Silence is measured against the ingestion watermark, from when Redis last started
 * (its data is not durable) and never in the first suspect period after taking the lead, so the
 * control plane's own outages never read as node deaths. Evictions are rate-limited and a rack
 * that went silent as a whole is held as a suspected partition (docs/adr/0007).
 */
@Injectable()
export class FailureDetector implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly live: NodeLiveStore;
  private timer: NodeJS.Timeout | null = null;
  private bucket: BucketState;
  private leadingSince: { epoch: number; at: number } | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private readonly policy: EvictionPolicy;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(CONFIG) private readonly config: ReconcilerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    private readonly election: LeaderElection,
    private readonly losses: AttemptLossApplier,
  ) {
    this.live = new NodeLiveStore(redis, config.GANTRY_NODE_DEAD_MS * 3);
    this.policy = {
      minRackSize: config.GANTRY_PARTITION_MIN_RACK,
      partitionShare: config.GANTRY_PARTITION_SHARE,
      evictionsPerSecond: config.GANTRY_EVICTIONS_PER_SECOND,
      burst: config.GANTRY_EVICTION_BURST,
    };
    this.bucket = { tokens: this.policy.burst, updatedAt: Date.now() };
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.running = this.round().catch((err) => this.logger.warn({ err }, 'failure detector round failed'));
    }, this.config.GANTRY_DETECTOR_INTERVAL_MS);
  }

  async round(nowMs = Date.now()): Promise<DetectorRound> {
    const none: DetectorRound = { judged: false, evicted: [], heldForPartition: [], deferred: [] };
    // 1. Only the leader judges, and not until it has led for a suspect period.
    const leadership = this.election.current();
    if (!leadership) return none;
    if (this.leadingSince?.epoch !== leadership.epoch) this.leadingSince = { epoch: leadership.epoch, at: nowMs };
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
    // 4. Silent nodes that hold work, longest silence first; and each rack's share of silence.
    const sql = autocommit(this.ds);
    const [withWork, racksOfNodes, lastSeen] = await Promise.all([loadNodesWithLiveWork(sql), loadNodeRacks(sql), this.live.allLastSeen()]);
    const silence = (id: string) => silenceMs(lastSeen.get(id) ?? null, watermark, infoSince);
    const dead = (id: string) => silence(id) >= this.config.GANTRY_NODE_DEAD_MS;
    const racks = new Map<string, RackView>();
    for (const n of racksOfNodes) {
      const r = racks.get(n.rack) ?? { rack: n.rack, total: 0, silent: 0 };
      r.total++;
      if (dead(n.nodeId)) r.silent++;
      racks.set(n.rack, r);
    }
    const candidates = withWork.filter((n) => dead(n.nodeId)).sort((a, b) => silence(b.nodeId) - silence(a.nodeId));
    // 5. Decide (rate limit, partitions), then end every attempt on each evicted node.
    const plan = planEvictions(candidates, racks, this.bucket, nowMs, this.policy);
    this.bucket = plan.bucket;
    held.set(plan.heldForPartition.length);
    deferred.set(plan.deferred.length);
    for (const nodeId of plan.evict) {
      for (const rank of await liveRanksOnNode(sql, nodeId)) {
        if ((await this.losses.lose(rank.jobId, rank.attempt, nodeId, 'NODE_LOST', leadership)) === 'deposed') {
          this.logger.warn({ epoch: leadership.epoch }, 'deposed mid-round; stopping');
          return { ...plan, judged: true, evicted: [] };
        }
      }
      evictions.inc();
      this.logger.warn({ nodeId, silenceMs: silence(nodeId) }, 'node declared dead; its attempts were ended');
    }
    return { judged: true, evicted: plan.evict, heldForPartition: plan.heldForPartition, deferred: plan.deferred };
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
