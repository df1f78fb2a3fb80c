import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Counter } from 'prom-client';
import { PlacementNode, PreemptibleAttempt, QueueLimits, chooseReclaimVictims, choosePreemptionVictims, preemptionFleet } from '@gantry/domain';
import {
  ConcurrentUpdateError,
  QueuedJobHead,
  Sql,
  autocommit,
  inTransaction,
  loadAttemptsStopping,
  loadCohortAttempts,
  loadPreemptibleAttempts,
  requestPreemption,
} from '@gantry/persistence';
import { CONFIG, SERVICE_LOGGER } from '@gantry/runtime';
import type { Logger } from '@gantry/platform';
import { SchedulerEnv } from './config';

const preemptions = new Counter({ name: 'gantry_scheduler_preemptions_total', help: 'Preemptors looked at, by outcome', labelNames: ['outcome'] });

/** What is still stopping for preemptors (see PreemptionStep.stopping). */
export interface Stopping {
  preemptors: ReadonlySet<string>;
  nodes: ReadonlySet<string>;
}

/** The pending reason of a job whose victims are stopping: a later cycle places it once they have. */
export const PREEMPTING = 'PREEMPTING';

/**
 * Why a job that waits could start if others stopped: capacity, not policy (quota, band) nor a node
 * that could never hold it. BACKFILL_WINDOW is capacity too: without runtime backfill it would read
 * INSUFFICIENT_CAPACITY, and it must not lose the preemption it had then.
 */
function waitsForCapacity(reason: string): boolean {
  return reason.startsWith('INSUFFICIENT_CAPACITY') || reason === 'GANG_WAITING' || reason === 'BACKFILL_WINDOW';
}

/**
 * Step 6 of a cycle (ADR 0026): jobs of `lowerPriority` queues that could not be placed may end
 * running attempts of strictly lower bands. For each, up to GANTRY_PREEMPTION_PER_CYCLE a cycle,
 * the victims are chosen (choosePreemptionVictims) and told to stop in one transaction
 * (requestPreemption); the preemptor waits (PREEMPTING) and a later cycle places it once their
 * agents report them ended, which frees their devices. A preemptor whose victims are still
 * stopping gets no more. A cycle with no such job reads nothing.
 */
@Injectable()
export class PreemptionStep {
  constructor(
    @Inject(DataSource) private readonly ds: DataSource,
    @Inject(CONFIG) private readonly config: SchedulerEnv,
    @Inject(SERVICE_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * What is still stopping for preemptors, read by the cycle before its node snapshot: the
   * preemptors (they wait, and get no new victims) and the nodes (withheld from the plan, so what
   * the victims give back goes to their preemptor). Read before the nodes, never after: a victim that
   * stops in between is then seen either still stopping or with its capacity back, never gone from
   * both (which would look like a preemptor whose victims left it no room, and preempt again).
   */
  async stopping(sql: Sql): Promise<Stopping> {
    return loadAttemptsStopping(sql);
  }

  /**
   * `waiting`: the cycle's jobs that wait, with why, in policy order. `bands`: the band of every
   * queue with preemption `lowerPriority`. `nodes`: the cycle's snapshot, and `placedOnto` the nodes
   * its plan placed onto as the plan left them. `stopping`: as read before the cycle's node snapshot.
   * Returns the jobs that now wait for victims (PREEMPTING).
   */
  async run(
    waiting: ReadonlyArray<{ jobId: string; reason: string }>,
    jobs: ReadonlyMap<string, QueuedJobHead>,
    bands: ReadonlyMap<string, number>,
    nodes: readonly PlacementNode[],
    placedOnto: ReadonlyMap<string, PlacementNode>,
    stopping: Stopping,
    nowMs: number,
  ): Promise<string[]> {
    const budget = this.config.GANTRY_PREEMPTION_PER_CYCLE;
    if (bands.size === 0 || budget === 0) return [];
    const candidates = waiting.filter((w) => waitsForCapacity(w.reason) && bands.has(jobs.get(w.jobId)?.queue ?? '')).map((w) => jobs.get(w.jobId)!);
    if (candidates.length === 0) return [];
    // A preemptor already waiting for victims stays PREEMPTING, and the budget goes to the others.
    const already = candidates.filter((j) => stopping.preemptors.has(j.id)).map((j) => j.id);
    const preemptors = candidates.filter((j) => !stopping.preemptors.has(j.id)).slice(0, budget);
    // The fleet as this cycle left it: a node its plan just filled is not room for a preemptor.
    const now = preemptors.length > 0 && placedOnto.size > 0 ? nodes.map((n) => placedOnto.get(n.id) ?? n) : nodes;
    const started = preemptors.length > 0 ? await this.preempt(autocommit(this.ds), preemptors, bands, now, stopping.nodes, nowMs) : [];
    return [...already, ...started];
  }

  /**
   * Reclaim (ADR 0039): a job of a preemptive queue held by its quota, within its queue's guarantee
   * but kept out by siblings borrowing from its cohort, ends the newest borrowed attempts
   * (chooseReclaimVictims) with the same grace and the same PREEMPTING wait as above. `held`: the
   * GPUs each queue holds, as this cycle read them. Returns the jobs that now wait for victims.
   */
  async reclaim(
    waiting: ReadonlyArray<{ jobId: string; reason: string }>,
    jobs: ReadonlyMap<string, QueuedJobHead>,
    preemptive: ReadonlyMap<string, number>,
    limits: QueueLimits,
    held: ReadonlyMap<string, number>,
    stopping: Stopping,
    nowMs: number,
  ): Promise<string[]> {
    const budget = this.config.GANTRY_PREEMPTION_PER_CYCLE;
    const lenders = waiting
      .filter((w) => w.reason === 'QUOTA_EXCEEDED')
      .map((w) => jobs.get(w.jobId)!)
      .filter((j) => j && preemptive.has(j.queue) && limits.cohortOf.has(j.queue));
    if (lenders.length === 0 || budget === 0) return [];
    const already = lenders.filter((j) => stopping.preemptors.has(j.id)).map((j) => j.id);
    const open = lenders.filter((j) => !stopping.preemptors.has(j.id)).slice(0, budget);
    if (open.length === 0) return already;
    const cohorts = new Set(open.map((j) => limits.cohortOf.get(j.queue)!));
    const members = [...limits.cohortOf].filter(([, c]) => cohorts.has(c)).map(([q]) => q);
    const sql = autocommit(this.ds);
    const cooldown = this.config.GANTRY_PREEMPTION_COOLDOWN_MS;
    const running = (await loadCohortAttempts(sql, members)).filter(
      (a) => !a.preempting && (a.lastPreemptedAtMs === null || nowMs - a.lastPreemptedAtMs >= cooldown),
    );
    // What is already stopping still counts as held: it frees capacity for its own preemptor, not for this one.
    const after = new Map(held);
    const started: string[] = [];
    for (const job of open) {
      const victims = chooseReclaimVictims(limits, after, { queue: job.queue, gpus: job.gpus * job.nodes }, running);
      if (!victims) {
        preemptions.inc({ outcome: 'no_victims' });
        continue;
      }
      const chosen = running.filter((a) => victims.includes(a.jobId));
      if (!(await this.requestVictims(job.id, chosen, nowMs))) continue;
      // Promised to this lender: no other one of this cycle counts them as borrowed any more.
      for (const a of chosen) {
        a.preempting = true;
        after.set(a.queue, (after.get(a.queue) ?? 0) - a.gpus);
      }
      after.set(job.queue, (after.get(job.queue) ?? 0) + job.gpus * job.nodes);
      running.splice(0, running.length, ...running.filter((a) => !a.preempting));
      preemptions.inc({ outcome: 'requested' });
      started.push(job.id);
      this.logger.info({ jobId: job.id, victims }, 'reclaiming borrowed GPUs for a lender');
    }
    return [...already, ...started];
  }

  private async preempt(
    sql: Sql,
    preemptors: QueuedJobHead[],
    bands: ReadonlyMap<string, number>,
    nodes: readonly PlacementNode[],
    withheld: ReadonlySet<string>,
    nowMs: number,
  ): Promise<string[]> {
    const top = Math.max(...preemptors.map((j) => bands.get(j.queue)!));
    const running: PreemptibleAttempt[] = await loadPreemptibleAttempts(sql, top);
    // Once for all of this cycle's preemptors; the victims each one is promised are marked in `running`, which the fleet shares.
    const fleet = preemptionFleet(nodes, running, withheld);
    const started: string[] = [];
    for (const job of preemptors) {
      const choice = choosePreemptionVictims({
        preemptor: {
          id: job.id,
          band: bands.get(job.queue)!,
          nodes: job.nodes,
          resources: { gpus: job.gpus, gpuModel: job.gpuModel, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
        },
        nodes,
        running,
        nowMs,
        cooldownMs: this.config.GANTRY_PREEMPTION_COOLDOWN_MS,
        fleet,
      });
      if (!choice) {
        preemptions.inc({ outcome: 'no_victims' });
        continue;
      }
      if (!(await this.requestVictims(job.id, choice.victims, nowMs))) continue;
      // Their capacity is promised to this preemptor: no other one of this cycle may count on it.
      const chosen = new Set(choice.victims.map((v) => v.jobId));
      for (const r of running) if (chosen.has(r.jobId)) r.preempting = true;
      preemptions.inc({ outcome: 'requested' });
      started.push(job.id);
      this.logger.info({ jobId: job.id, victims: choice.victims, nodeIds: choice.nodeIds, gpus: choice.gpus }, 'preempting lower-band attempts');
    }
    return started;
  }

  /**
   * Asks the victims' attempts to end for `preemptorId`, in one transaction. False when it lost a race
   * (the preemptor was placed or given victims by another replica, or a victim moved on since it was
   * read): counted, and looked at again next cycle.
   */
  private async requestVictims(preemptorId: string, victims: ReadonlyArray<{ jobId: string; attempt: number }>, nowMs: number): Promise<boolean> {
    const done = await inTransaction(this.ds, (tx) =>
      requestPreemption(tx, preemptorId, victims, this.config.GANTRY_PREEMPTION_GRACE_MS, new Date(nowMs)),
    ).catch((e) => {
      if (e instanceof ConcurrentUpdateError) return false;
      throw e;
    });
    if (!done) preemptions.inc({ outcome: 'lost_race' });
    return done;
  }
}
