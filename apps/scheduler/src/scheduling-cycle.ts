import { Inject, Injectable } from '@nestjs/common';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { Counter, Histogram } from 'prom-client';
import {
  BackfillInput,
  CyclePlan,
  FairShareInput,
  Placement,
  PlacementNode,
  QueueLimits,
  QueueShareState,
  QueuedJob,
  placementFence,
  planCycle,
  queueLimits,
} from '@gantry/domain';
import {
  QueuedJobHead,
  NodeLeases,
  Sql,
  autocommit,
  listQueues,
  loadQueuedJobsPerQueue,
  nodeLiveStoreFor,
  queueGpusHeld,
  setPendingReasons,
} from '@gantry/persistence';
import { CONFIG, REDIS, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { SchedulerEnv } from './config';
import { FairShareSnapshot } from './fair-share-snapshot';
import { HoldingsSnapshot } from './holdings-snapshot';
import { LivenessSnapshot } from './liveness-snapshot';
import { NodeSnapshot } from './node-snapshot';
import { NodeRunsSnapshot } from './node-runs-snapshot';
import { pacedPaging } from './paced-paging';
import { CycleClock } from './cycle-clock';
import { PlacementCommitter } from './placement-committer';
import { holdArraysAtParallelism } from './array-parallelism';
import { PREEMPTING, PreemptionStep, Stopping } from './preemption-step';

const placementOutcomes = new Counter({ name: 'gantry_scheduler_placements_total', help: 'Attempts placed', labelNames: ['outcome'] });
const placementsPerCommit = new Histogram({
  name: 'gantry_scheduler_placements_per_commit',
  help: 'Placements one commit statement was asked to write',
  buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
});

/**
 * Every node's last writer is checked, and every last-heard time re-read, this often even though
 * only changes are read in between (see the snapshots): a backstop, rare because reading a large
 * fleet's scores or rows is costly (ADR 0012). Cached last-heard times age
 * between reads, so a node that stops beating still turns DEGRADED on time.
 */
const FULL_NODE_READ_MS = 300_000;
const FULL_LIVENESS_READ_MS = 300_000;
/** Those reads take at most a quarter of the scheduler's thread while they run, pausing at most 1 s between pages. */
const FULL_READ_PAGING = pacedPaging(0.25, 1_000);
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
  /** Placements lost, of both kinds: */
  lostRaces: number;
  /** ... of which left out because another replica held a node's lease (the rest failed their compare-and-set). */
  lostLeases: number;
  /** Whether some queue had more jobs than this cycle could look at: cycle again at once if it placed any. */
  moreQueued: boolean;
  /** Milliseconds per step, for profiling (also in gantry_scheduler_cycle_step_seconds). */
  steps: Record<string, number>;
}

/** The cycle's view of the cluster, kept between cycles and moved on by what changed (step 2). */
interface Snapshot {
  queues: QueueShareState[];
  /** Decayed usage per queue and owner; undefined under GANTRY_SCHEDULER_FAIRNESS=drf. */
  fairShare: FairShareInput | undefined;
  nodes: PlacementNode[];
  /** The band of every queue whose jobs may preempt lower bands. */
  preemptive: Map<string, number>;
  /** What is still stopping for preemptors, read before the nodes; null when no queue preempted at the last cycle (then nothing preempts this one). */
  stopping: Stopping | null;
  /** Runtime-aware backfill's view of the ranks on the nodes the last reservation held; absent when strict. */
  backfill?: BackfillInput;
}

interface CommitTally {
  placed: number;
  lostRaces: number;
  lostLeases: number;
  failed: number;
}

const limitSpec = (q: QueueShareState) => ({ name: q.name, parent: q.parent ?? null, quotaGpus: q.quotaGpus, borrowingLimitGpus: q.borrowingLimitGpus ?? 0 });

/** One scheduling pass over a snapshot of queued jobs and nodes. */
@Injectable()
export class SchedulingCycle {
  private readonly leases: NodeLeases;
  private readonly nodes = new NodeSnapshot(FULL_NODE_READ_MS, FULL_READ_PAGING);
  private readonly holdings = new HoldingsSnapshot(HOLDINGS_READ_MS);
  /** The ranks on the last reservation's nodes, for runtime-aware backfill (unused when strict). */
  private readonly runs = new NodeRunsSnapshot();
  /** Read with the holdings, as often; null under GANTRY_SCHEDULER_FAIRNESS=drf. */
  private readonly fairShare: FairShareSnapshot | null;
  private readonly liveness: LivenessSnapshot;
  /** Some queue had preemption lowerPriority at the last read: only then is what is stopping read. */
  private preemptiveSeen = false;

  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG) private readonly config: SchedulerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
    private readonly committer: PlacementCommitter,
    private readonly preemption: PreemptionStep,
  ) {
    this.liveness = new LivenessSnapshot(nodeLiveStoreFor(redis, config.GANTRY_NODE_DEAD_MS), LIVENESS_LAG_MS, FULL_LIVENESS_READ_MS, FULL_READ_PAGING);
    const instance = config.GANTRY_INSTANCE_ID ?? `${require('node:os').hostname()}-${process.pid}`;
    this.leases = new NodeLeases(redis, instance, config.GANTRY_NODE_LEASE_MS);
    this.fairShare =
      config.GANTRY_SCHEDULER_FAIRNESS === 'decayed' ? new FairShareSnapshot(HOLDINGS_READ_MS, config.GANTRY_FAIRSHARE_HALF_LIFE_HOURS * 3600) : null;
  }

  /**
   * 1. Read the head of every queue, less array children over their array's parallelism; with nothing queued, nothing else is read.
   * 2. Snapshot the queues, what they hold, and the nodes and their liveness (only what changed since the last cycle).
   * 3. Decide (planCycle): policy orders the jobs (priority bands, decayed fair share or DRF, quotas), placement fits them to nodes.
   * 4. Commit the placements whose nodes' leases this replica got, together, fenced by the queues' limits (see PlacementCommitter).
   * 5. Jobs of preemptive queues that could not fit may end lower bands' attempts (PreemptionStep).
   * 6. Say why the rest wait.
   */
  async run(nowMs = Date.now()): Promise<CycleResult> {
    const clock = new CycleClock();
    const sql = autocommit(this.ds);
    const { jobs, held, written } = await this.readQueueHeads(sql, clock);
    if (jobs.length === 0) {
      if (held.length > 0) await this.explainWaits(sql, held, written, clock);
      return this.finish(clock, 0, { placed: 0, lostRaces: 0, lostLeases: 0, failed: 0 }, false);
    }
    const snapshot = await this.snapshot(sql, nowMs, clock);
    const decision = this.decide(jobs, snapshot, clock);
    if (snapshot.backfill) this.runs.want(decision.plan.reservation?.nodeIds ?? []);
    const byId = new Map(jobs.map((j) => [j.id, j]));
    const limits = queueLimits(snapshot.queues.map(limitSpec));
    const tally = await this.commit(decision.plan.placements, byId, limits, clock);
    const preempting = await this.preempt(decision.pendingReasons, byId, snapshot, decision.plan.after, limits, nowMs, clock);
    await this.explainWaits(
      sql,
      [...decision.pendingReasons.map((w) => (preempting.has(w.jobId) ? { jobId: w.jobId, reason: PREEMPTING } : w)), ...held],
      written,
      clock,
    );
    return this.finish(clock, jobs.length, tally, decision.moreQueued);
  }

  /**
   * 1. The oldest queued jobs of every queue, up to the lookahead each; arrays at their parallelism
   * held back (ADR 0025). `written`: the pending reason each job read has now.
   */
  private async readQueueHeads(
    sql: Sql,
    clock: CycleClock,
  ): Promise<{ jobs: QueuedJobHead[]; held: Array<{ jobId: string; reason: string }>; written: ReadonlyMap<string, string | null> }> {
    const heads = await loadQueuedJobsPerQueue(sql, this.config.GANTRY_SCHEDULER_LOOKAHEAD);
    const written = new Map(heads.map((j) => [j.id, j.pendingReason ?? null]));
    const hold = await holdArraysAtParallelism(sql, heads);
    clock.lap('jobs');
    return { ...hold, written };
  }

  /** 2. Queues with what they hold, and the placement nodes with their health from silence. */
  private async snapshot(sql: Sql, nowMs: number, clock: CycleClock): Promise<Snapshot> {
    // Before the nodes (see PreemptionStep.stopping); one index scan, skipped while no queue preempts.
    const stopping = this.preemptiveSeen ? await clock.time('snapshot.stopping', this.preemption.stopping(sql)) : null;
    const [queueRows, holdings, gpusHeld, fairShare] = await Promise.all([
      clock.time('snapshot.queues', listQueues(sql)),
      clock.time('snapshot.holdings', this.holdings.refresh(sql, nowMs)),
      // Exact GPU counts (one row per queue), so quotas are planned against every replica's placements.
      clock.time('snapshot.gpusHeld', queueGpusHeld(sql)),
      this.fairShare ? clock.time('snapshot.fairShare', this.fairShare.refresh(sql, nowMs)) : undefined,
      clock.time('snapshot.nodes', this.nodes.refresh(sql, nowMs)),
      clock.time('snapshot.liveness', this.liveness.refresh(nowMs, this.config.GANTRY_NODE_DEAD_MS)),
    ]);
    clock.lap('snapshot');
    const nodes = this.nodes.placementNodes(this.liveness, nowMs, { suspectMs: this.config.GANTRY_NODE_SUSPECT_MS, deadMs: this.config.GANTRY_NODE_DEAD_MS });
    clock.lap('health');
    const queues = queueRows.map((q) => ({
      name: q.name,
      priority: q.priority,
      weight: q.weight,
      quotaGpus: q.quotaGpus,
      held: { ...(holdings.get(q.name) ?? { gpus: 0, cpuCores: 0, memoryMiB: 0 }), gpus: gpusHeld.get(q.name) ?? 0 },
      parent: q.parent,
      borrowingLimitGpus: q.borrowingLimitGpus,
      ownerWeights: q.ownerWeights,
    }));
    const preemptive = new Map(queueRows.filter((q) => q.preemption === 'lowerPriority').map((q) => [q.name, q.priority]));
    this.preemptiveSeen = preemptive.size > 0;
    let backfill: BackfillInput | undefined;
    if (this.config.GANTRY_SCHEDULER_BACKFILL === 'runtime') {
      // After the node rows, so each entry can be matched to the row the plan uses; a few nodes, only when they changed.
      const xidOf = (id: string) => this.nodes.changedXid(id);
      await this.runs.refresh(sql, nowMs, xidOf);
      clock.lap('runs');
      backfill = { nowMs, runs: this.runs.lookup(xidOf) };
    }
    return { queues, fairShare, nodes, preemptive, stopping, backfill };
  }

  /** 3. The pure decision, on the fit index and gang candidates kept between cycles. */
  private decide(jobs: QueuedJobHead[], snapshot: Snapshot, clock: CycleClock): CyclePlan {
    const queued: Array<QueuedJob & { maxRuntimeSeconds: number | null }> = jobs.map((j) => ({
      id: j.id,
      queue: j.queue,
      owner: j.owner,
      nodes: j.nodes,
      resources: { gpus: j.gpus, gpuModel: j.gpuModel, cpuCores: j.cpuCores, memoryMiB: j.memoryMiB },
      maxRuntimeSeconds: j.maxRuntimeSeconds,
      // Nodes that did not start an earlier attempt (START_TIMEOUT, ADR 0035): placed elsewhere while it can be.
      ...(j.startFailedOn.length > 0 ? { avoidNodeIds: j.startFailedOn } : {}),
    }));
    const decision = planCycle({
      jobs: queued,
      queues: snapshot.queues,
      nodes: snapshot.nodes,
      lookahead: this.config.GANTRY_SCHEDULER_LOOKAHEAD,
      batchSize: this.config.GANTRY_SCHEDULER_BATCH,
      indexes: this.nodes.planIndexes(),
      withheld: snapshot.stopping?.nodes,
      capacity: this.nodes.capacity(),
      backfill: snapshot.backfill,
      fairShare: snapshot.fairShare,
    });
    clock.lap('plan');
    return decision;
  }

  /**
   * 4. Under leases on their nodes, the placements this replica got every lease for, in one commit;
   * a placement whose leases another replica holds lost a race. Own placements move the holdings on.
   */
  private async commit(placements: Placement[], byId: Map<string, QueuedJobHead>, limits: QueueLimits, clock: CycleClock): Promise<CommitTally> {
    const leased = await this.leases.acquireEach(placements.flatMap((p) => p.nodeIds));
    clock.lap('lease');
    const mine = placements.filter((p) => p.nodeIds.every((id) => leased.has(id)));
    const versions = new Map<string, number>();
    for (const p of mine) for (const id of p.nodeIds) versions.set(id, this.nodes.version(id)!);
    const lostLeases = placements.length - mine.length;
    const tally: CommitTally = { placed: 0, lostRaces: lostLeases, lostLeases, failed: 0 };
    try {
      // The limits the commit enforces against every replica's placements (ADR 0039).
      const fence = placementFence(
        limits,
        mine.map((p) => byId.get(p.jobId)!.queue),
      );
      const outcomes = await this.committer.commitAll(
        mine.map((p) => ({ job: byId.get(p.jobId)!, nodeIds: p.nodeIds, gpuIndices: p.gpuIndices })),
        versions,
        new Date(),
        fence,
      );
      if (mine.length > 0) placementsPerCommit.observe(mine.length);
      outcomes.forEach((o, i) => {
        if (o.outcome === 'placed') {
          tally.placed++;
          const job = byId.get(mine[i].jobId)!;
          this.holdings.add(job.queue, { gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB }, mine[i].nodeIds.length);
          this.fairShare?.add(job.queue, job.owner, job.gpus * mine[i].nodeIds.length);
        } else if (o.outcome === 'lost-race') tally.lostRaces++;
        else {
          // One job that cannot be committed must not stop every other placement.
          tally.failed++;
          this.logger.error({ err: o.error, jobId: mine[i].jobId }, 'placement commit failed');
        }
      });
      clock.lap('commit');
    } finally {
      await this.leases.release([...leased]);
    }
    placementOutcomes.inc({ outcome: 'placed' }, tally.placed);
    placementOutcomes.inc({ outcome: 'lost_race' }, tally.lostRaces);
    placementOutcomes.inc({ outcome: 'failed' }, tally.failed);
    return tally;
  }

  /** 5. Preemption, for the jobs that wait for capacity in preemptive queues; those now waiting for victims are returned. */
  private async preempt(
    waiting: Array<{ jobId: string; reason: string }>,
    byId: Map<string, QueuedJobHead>,
    snapshot: Snapshot,
    placedOnto: ReadonlyMap<string, PlacementNode>,
    limits: QueueLimits,
    nowMs: number,
    clock: CycleClock,
  ): Promise<Set<string>> {
    if (snapshot.preemptive.size === 0 || snapshot.stopping === null) return new Set();
    try {
      const preempting = new Set(await this.preemption.run(waiting, byId, snapshot.preemptive, snapshot.nodes, placedOnto, snapshot.stopping, nowMs));
      // Lenders take their guarantee back from borrowers in their cohort (ADR 0039); read only when one waits on its quota.
      const held = new Map(snapshot.queues.map((q) => [q.name, q.held.gpus]));
      for (const id of await this.preemption.reclaim(waiting, byId, snapshot.preemptive, limits, held, snapshot.stopping, nowMs)) preempting.add(id);
      clock.lap('preempt');
      return preempting;
    } catch (err) {
      // Placements are committed already; a failed preemption is tried again next cycle.
      this.logger.error({ err }, 'preemption step failed');
      return new Set();
    }
  }

  /**
   * 6. Every job that waits says why: only the reasons that differ from what the job's row had when
   * this cycle read it are written (a blocked queue of 1,000 jobs otherwise sends all 1,000 every cycle).
   */
  private async explainWaits(
    sql: Sql,
    reasons: Array<{ jobId: string; reason: string }>,
    written: ReadonlyMap<string, string | null>,
    clock: CycleClock,
  ): Promise<void> {
    await setPendingReasons(
      sql,
      reasons.filter((r) => written.get(r.jobId) !== r.reason),
    );
    clock.lap('reasons');
  }

  private finish(clock: CycleClock, considered: number, tally: CommitTally, moreQueued: boolean): CycleResult {
    const steps = clock.end();
    if (considered === 0) return { considered, placed: 0, lostRaces: 0, lostLeases: 0, moreQueued, steps };
    if (tally.lostRaces > 0) this.logger.debug({ lostRaces: tally.lostRaces }, 'placements lost to concurrent writers; retrying next cycle');
    const took = {
      considered,
      placed: tally.placed,
      lostRaces: tally.lostRaces,
      steps: Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, Math.round(v)])),
    };
    if (clock.elapsedMs() > SLOW_CYCLE_MS) this.logger.info(took, 'slow scheduling cycle');
    else this.logger.debug(took, 'scheduling cycle');
    return { considered, placed: tally.placed, lostRaces: tally.lostRaces, lostLeases: tally.lostLeases, moreQueued, steps };
  }
}
