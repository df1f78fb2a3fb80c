import { DataSource } from 'typeorm';
import { chooseGpuIndices } from '@gantry/domain';
import { JobRecord, appendJobEvents, autocommit, casUpdateJob, commitPlacementsThatHold, findJob, inTransaction, loadNodes } from '@gantry/persistence';

/**
 * Places a QUEUED job as attempt 1 on `nodeIds` (rank i on nodeIds[i]) with the scheduler's own
 * statement (commitPlacementsThatHold: capacity, devices, SCHEDULED, ranks, event), without RUN commands.
 * With `running`, the job then moves SCHEDULED -> RUNNING with its event, as the gateway and the
 * reconciler write a change (casUpdateJob); its ranks keep the state the placement gave them.
 * Throws if the placement does not hold (a node without room, a job not QUEUED).
 */
export async function placeJob(ds: DataSource, job: JobRecord, nodeIds: string[], opts: { running?: boolean; now?: Date } = {}): Promise<JobRecord> {
  const now = opts.now ?? new Date();
  const sql = autocommit(ds);
  const nodes = new Map((await loadNodes(sql, nodeIds)).map((n) => [n.id, n]));
  const versions = new Map([...nodes.values()].map((n) => [n.id, n.version]));
  const { lost } = await commitPlacementsThatHold(
    sql,
    [
      {
        jobId: job.id,
        expectedVersion: job.version,
        attempt: 1,
        nodeIds,
        // The devices the scheduler would choose (lowest free first).
        gpuIndices: nodeIds.map((id) => (nodes.get(id) ? chooseGpuIndices(nodes.get(id)!, job.gpus) : null) ?? []),
        perRank: { gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB },
        commands: [],
      },
    ],
    versions,
    now,
  );
  if (lost.length > 0) throw new Error(`placeJob: the placement of ${job.id} on ${nodeIds.join(', ')} did not hold`);
  if (opts.running) {
    await inTransaction(ds, async (tx) => {
      const placed = (await findJob(tx, job.id))!;
      const { firstSeq } = await casUpdateJob(tx, job.id, placed.version, { state: 'RUNNING', startedAt: now }, 1, now);
      await appendJobEvents(tx, job.id, firstSeq, [{ type: 'STATE_CHANGED', at: now, fromState: 'SCHEDULED', toState: 'RUNNING', attempt: 1, nodeIds }]);
    });
  }
  return (await findJob(sql, job.id))!;
}
