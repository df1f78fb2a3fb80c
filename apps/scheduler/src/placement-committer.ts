import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { TOPICS, buildRunCommands } from '@gantry/contracts';
import { assertTransition } from '@gantry/domain';
import {
  JobRecord, appendJobEvents, casAllocate, casUpdateJob, enqueueOutbox, inTransaction, insertAttemptRanks,
} from '@gantry/persistence';

/**
 * Commits one placement atomically: the nodes' capacity (compare-and-set on each node's version),
 * the job's QUEUED -> SCHEDULED transition (compare-and-set on the job's version), its attempt ranks,
 * the STATE_CHANGED event and the RUN commands in the outbox. A lost race rolls everything back.
 */
@Injectable()
export class PlacementCommitter {
  constructor(@Inject(DataSource) private readonly ds: DataSource) {}

  async commit(job: JobRecord, nodeIds: string[], nodeVersions: Map<string, number>, now: Date): Promise<void> {
    assertTransition(job.state, 'SCHEDULED');
    const attempt = job.attempt + 1;
    await inTransaction(this.ds, async (sql) => {
      await casAllocate(
        sql,
        nodeIds.map((nodeId) => ({ nodeId, expectedVersion: nodeVersions.get(nodeId)!, gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB })),
        now,
      );
      const { firstSeq } = await casUpdateJob(sql, job.id, job.version, { state: 'SCHEDULED', attempt, nodeIds, pendingReason: null }, 1, now);
      await insertAttemptRanks(sql, job.id, attempt, nodeIds.map((nodeId, rank) => ({ rank, nodeId, gpus: job.gpus, cpuCores: job.cpuCores, memoryMiB: job.memoryMiB })), now);
      await appendJobEvents(sql, job.id, firstSeq, [{ type: 'STATE_CHANGED', at: now, fromState: 'QUEUED', toState: 'SCHEDULED', attempt, nodeIds }]);
      const headers: Record<string, string> = job.traceParent ? { traceparent: job.traceParent } : {};
      await enqueueOutbox(sql, buildRunCommands(job, attempt, nodeIds).map((c) => ({ topic: TOPICS.agentCommands, key: c.nodeId, value: c, headers })));
    });
  }
}
