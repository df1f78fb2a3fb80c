import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PlacementFence, assertTransition } from '@gantry/domain';
import { QueuedJobHead, PlacementWrite, autocommit, commitPlacementsThatHold } from '@gantry/persistence';
import { dispatchOutboxRow } from '@gantry/runtime';

export interface PlannedPlacement {
  job: QueuedJobHead;
  nodeIds: string[];
  /** Each rank's GPU devices, as the plan chose them. */
  gpuIndices: number[][];
}

export type CommitOutcome = 'placed' | 'lost-race' | 'failed';

/**
 * Commits placements atomically: the nodes' capacity (compare-and-set on each node's version), the
 * jobs' QUEUED -> SCHEDULED (compare-and-set on each job's version), attempt ranks, STATE_CHANGED
 * events and one dispatch row per job, from which the outbox relay builds and sends the RUN of
 * every rank in bounded chunks (run-dispatch.ts): a 1,024-rank gang costs this statement one row. A cycle's placements go in one statement (one round trip, one commit for
 * all); those that lost a race are left out of it (commitPlacementsThatHold), so a conflict costs
 * only its own placement, and so does one that would take its queue or cohort past a limit (the
 * `fence`, ADR 0039). If the statement fails otherwise, each placement is tried alone, so one
 * placement the database refuses cannot stop the others.
 */
@Injectable()
export class PlacementCommitter {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  /** One outcome per placement, in order; errors other than a lost race are returned as 'failed' with the error. */
  async commitAll(
    placements: PlannedPlacement[],
    nodeVersions: Map<string, number>,
    now: Date,
    fence?: PlacementFence,
  ): Promise<Array<{ outcome: CommitOutcome; error?: unknown }>> {
    const writes = placements.map((p) => toWrite(p));
    if (writes.length === 0) return [];
    const sql = autocommit(this.ds);
    try {
      const { placed } = await commitPlacementsThatHold(sql, writes, nodeVersions, now, fence);
      const ok = new Set(placed);
      return writes.map((w) => ({ outcome: ok.has(w.jobId) ? 'placed' : 'lost-race' }));
    } catch {
      // Fall through: find out which placement was the problem by committing each alone.
    }
    const outcomes: Array<{ outcome: CommitOutcome; error?: unknown }> = [];
    const versions = new Map(nodeVersions);
    for (const w of writes) {
      try {
        const { placed } = await commitPlacementsThatHold(sql, [w], versions, now, fence);
        if (placed.length === 0) {
          outcomes.push({ outcome: 'lost-race' });
          continue;
        }
        for (const id of new Set(w.nodeIds)) versions.set(id, versions.get(id)! + 1);
        outcomes.push({ outcome: 'placed' });
      } catch (e) {
        outcomes.push({ outcome: 'failed', error: e });
      }
    }
    return outcomes;
  }
}

function toWrite({ job, nodeIds, gpuIndices }: PlannedPlacement): PlacementWrite {
  assertTransition(job.state, 'SCHEDULED');
  const attempt = job.attempt + 1;
  const headers: Record<string, string> = job.traceParent ? { traceparent: job.traceParent } : {};
  return {
    jobId: job.id,
    expectedVersion: job.version,
    attempt,
    nodeIds,
    gpuIndices,
    perRank: { gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
    commands: [dispatchOutboxRow(job.id, attempt, headers)],
  };
}
