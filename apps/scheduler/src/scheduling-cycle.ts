import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter, Histogram } from 'prom-client';
import { QueueShareState, QueuedJob, orderByPolicy, planPlacements } from '@gantry/domain';
import { NodeLeases, NodeLiveStore, autocommit, listQueues, loadQueuedJobsPerQueue, setPendingReasons } from '@gantry/persistence';
import { CONFIG, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { SchedulerEnv } from './config';
import { HoldingsSnapshot } from './holdings-snapshot';
import { LivenessSnapshot } from './liveness-snapshot';
import { NodeSnapshot } from './node-snapshot';
import { PlacementCommitter } from './placement-committer';

const placements = new Counter({ name: 'gantry_scheduler_placements_total', help: 'Attempts placed', labelNames: ['outcome'] });
const placementsPerCommit = new Histogram({ name: 'gantry_scheduler_placements_per_commit', help: 'Placements one commit statement was asked to write', buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] });
const cycleSeconds = new Histogram({ name: 'gantry_scheduler_cycle_seconds', help: 'Duration of one scheduling cycle', buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] });
const stepSeconds = new Histogram({
  name: 'gantry_scheduler_cycle_step_seconds', help: 'Duration of each step of a scheduling cycle', labelNames: ['step'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
});

/**
 * Everything is re-read this often even though only changes are read in between (see the
 * snapshots): a backstop, rare because a full read of 50,000 rows or scores costs up to a second
 * under load. Cached last-heard times age between reads, so a node that stops beating still turns
 * DEGRADED on time.
 */
const FULL_NODE_READ_MS = 300_000;
const FULL_LIVENESS_READ_MS = 300_000;
/** How often queue holdings are re-read (see HoldingsSnapshot); in between, own placements move them on. */
const HOLDINGS_READ_MS = 1_000;
/** A cycle slower than this is logged at info with its steps. */
const SLOW_CYCLE_MS = 1_000;
/**
 * How much later than its stamp a beat may reach Redis and still be seen by the next incremental
 * read; later ones wait for the next full read. A missed beat makes a node look one beat older,
 * and the suspect timeout is three beats.
 */
const LIVENESS_LAG_MS = 1_000;

export interface CycleResult {
  considered: number;
  placed: number;
  lostRaces: number;
  /** Whether some queue had more jobs than this cycle could look at: cycle again at once if it placed any. */
  moreQueued: boolean;
  /** Milliseconds per step, for profiling (also in gantry_scheduler_cycle_step_seconds). */
  steps: Record<string, number>;
}

/** One scheduling pass over a snapshot of queued jobs and nodes. */
@Injectable()
export class SchedulingCycle {
  private readonly leases: NodeLeases;
  private readonly nodes = new NodeSnapshot(FULL_NODE_READ_MS);
  private readonly holdings = new HoldingsSnapshot(HOLDINGS_READ_MS);
  private readonly liveness: LivenessSnapshot;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: SchedulerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    private readonly committer: PlacementCommitter,
  ) {
    this.liveness = new LivenessSnapshot(new NodeLiveStore(redis, config.GANTRY_NODE_DEAD_MS * 3), LIVENESS_LAG_MS, FULL_LIVENESS_READ_MS);
    const instance = config.GANTRY_INSTANCE_ID ?? `${require('node:os').hostname()}-${process.pid}`;
    this.leases = new NodeLeases(redis, instance, config.GANTRY_NODE_LEASE_MS);
  }

  /**
   * 1. The head of every queue; with nothing queued, nothing else is read.
   * 2. The queues, what they hold, and the nodes and their liveness (only what changed since the last cycle).
   * 3. Decide: policy orders the jobs (priority bands, DRF, quotas), placement fits them to nodes.
   * 4. Commit the placements whose nodes' leases this replica got, together (see PlacementCommitter).
   * 5. Say why the rest wait.
   */
  async run(nowMs = Date.now()): Promise<CycleResult> {
    const end = cycleSeconds.startTimer();
    const steps: Record<string, number> = {};
    const started = performance.now();
    let mark = started;
    const lap = (step: string) => {
      const t = performance.now();
      steps[step] = t - mark;
      stepSeconds.observe({ step }, (t - mark) / 1000);
      mark = t;
    };
    const sql = autocommit(this.ds);
    const lookahead = this.config.GANTRY_SCHEDULER_LOOKAHEAD;

    // 1.
    const jobs = await loadQueuedJobsPerQueue(sql, lookahead);
    lap('jobs');
    if (jobs.length === 0) {
      end();
      return { considered: 0, placed: 0, lostRaces: 0, moreQueued: false, steps };
    }
    const perQueue = new Map<string, number>();
    for (const j of jobs) perQueue.set(j.queue, (perQueue.get(j.queue) ?? 0) + 1);
    let moreQueued = [...perQueue.values()].some((n) => n >= lookahead);

    // 2.
    const t2 = performance.now();
    const timed = <T>(name: string, p: Promise<T>) => p.then((v) => ((steps[name] = performance.now() - t2), v));
    const [queueRows, holdings] = await Promise.all([
      timed('snapshot.queues', listQueues(sql)),
      timed('snapshot.holdings', this.holdings.refresh(sql, nowMs)),
      timed('snapshot.nodes', this.nodes.refresh(sql, nowMs)),
      timed('snapshot.liveness', this.liveness.refresh(nowMs, this.config.GANTRY_NODE_DEAD_MS)),
    ]);
    lap('snapshot');
    const thresholds = { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS };
    const nodes = this.nodes.placementNodes(this.liveness, nowMs, thresholds);
    const byId = new Map(jobs.map((j) => [j.id, j]));
    lap('health');

    // 3. The band rides along so a lower band kept off capacity by a higher one is told PRIORITY, and
    // the first blocked job reserves the nodes it waits for (anti-starvation, ADR 0008).
    const queued: QueuedJob[] = jobs.map((j) => ({ id: j.id, queue: j.queue, nodes: j.nodes, resources: { gpus: j.gpus, gpuModel: j.gpuModel, cpuCores: j.cpuCores, memoryMiB: j.memoryMiB } }));
    const capacity = { gpus: 0, cpuCores: 0, memoryMiB: 0 };
    for (const n of nodes) {
      if (n.health !== 'HEALTHY' || n.cordoned) continue;
      capacity.gpus += n.gpusTotal;
      capacity.cpuCores += n.cpuCores;
      capacity.memoryMiB += n.memoryMiB;
    }
    const queues: QueueShareState[] = queueRows.map((q) => ({
      name: q.name, priority: q.priority, weight: q.weight, quotaGpus: q.quotaGpus, held: holdings.get(q.name) ?? { gpus: 0, cpuCores: 0, memoryMiB: 0 },
    }));
    const order = orderByPolicy(queued, queues, capacity, lookahead);
    const band = new Map(queueRows.map((q) => [q.name, q.priority]));
    // Past the batch, jobs keep their place and their last pending reason until the next cycle.
    const batch = order.ordered.slice(0, this.config.GANTRY_SCHEDULER_BATCH);
    const plan = planPlacements(batch.map((j) => ({ ...j, band: band.get(j.queue) ?? 0 })), nodes, this.nodes.planIndexes());
    if (order.ordered.length > batch.length) moreQueued = true;
    lap('plan');

    // 4.
    const leased = await this.leases.acquireEach(plan.placements.flatMap((p) => p.nodeIds));
    lap('lease');
    const mine = plan.placements.filter((p) => p.nodeIds.every((id) => leased.has(id)));
    const versions = new Map<string, number>();
    for (const p of mine) for (const id of p.nodeIds) versions.set(id, this.nodes.version(id)!);
    let lostRaces = plan.placements.length - mine.length;
    let placed = 0;
    let failed = 0;
    try {
      const outcomes = await this.committer.commitAll(mine.map((p) => ({ job: byId.get(p.jobId)!, nodeIds: p.nodeIds })), versions, new Date());
      if (mine.length > 0) placementsPerCommit.observe(mine.length);
      outcomes.forEach((o, i) => {
        if (o.outcome === 'placed') {
          placed++;
          const job = byId.get(mine[i].jobId)!;
          this.holdings.add(job.queue, { gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB }, mine[i].nodeIds.length);
        } else if (o.outcome === 'lost-race') lostRaces++;
        else {
          // One job that cannot be committed must not stop every other placement.
          failed++;
          this.logger.error({ err: o.error, jobId: mine[i].jobId }, 'placement commit failed');
        }
      });
      lap('commit');
    } finally {
      await this.leases.release([...leased]);
    }
    placements.inc({ outcome: 'placed' }, placed);
    placements.inc({ outcome: 'lost_race' }, lostRaces);
    placements.inc({ outcome: 'failed' }, failed);

    // 5.
    await setPendingReasons(sql, [...order.held, ...plan.pending].map((p) => ({ jobId: p.jobId, reason: p.reason })));
    lap('reasons');
    end();
    if (lostRaces > 0) this.logger.debug({ lostRaces }, 'placements lost to concurrent writers; retrying next cycle');
    const took = { considered: jobs.length, placed, lostRaces, steps: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, Math.round(v)])) };
    if (performance.now() - started > SLOW_CYCLE_MS) this.logger.info(took, 'slow scheduling cycle');
    else this.logger.debug(took, 'scheduling cycle');
    return { considered: jobs.length, placed, lostRaces, moreQueued, steps };
  }
}
