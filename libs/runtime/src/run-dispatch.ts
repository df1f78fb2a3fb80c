import { OUTBOX_DISPATCH, TOPICS, runCommandsOf } from '@gantry/contracts';
import { OutboxExpander, OutboxRow, TopicMessage } from '@gantry/messaging';
import { OutboxMessage, findJobs, hostIpcQueues } from '@gantry/persistence';

/** What the scheduler writes to the outbox for one placement: the RUNs of every rank are built from it. */
export interface DispatchRow {
  jobId: string;
  attempt: number;
}

export function dispatchOutboxRow(jobId: string, attempt: number, headers: Record<string, string>): OutboxMessage {
  const value: DispatchRow = { jobId, attempt };
  return { topic: OUTBOX_DISPATCH, key: jobId, value, headers };
}

/**
 * Turns each dispatch row into the RUN of every rank of its attempt, built when the relay sends
 * them: the job's command and env are read once per claim, and the RUNs are made one at a time as
 * the relay's requests fill (at most MAX_REQUEST_BYTES in memory), however many ranks there are.
 * An attempt that is no longer the job's current one, or a job that has ended, sends nothing: its
 * RUN would only be killed again (the reconciler repeats what a live attempt's nodes lack).
 */
export const runDispatchExpander: OutboxExpander = {
  source: OUTBOX_DISPATCH,
  async prepare(sql, rows) {
    const ids = [...new Set(rows.map((r) => (JSON.parse(r.value) as DispatchRow).jobId))];
    const jobs = new Map((await findJobs(sql, ids)).map((j) => [j.id, j]));
    const hostIpc = await hostIpcQueues(
      sql,
      [...jobs.values()].map((j) => j.queue),
    );
    const issuedAt = Date.now();
    return function* expand(row: OutboxRow): Iterable<TopicMessage> {
      const { jobId, attempt } = JSON.parse(row.value) as DispatchRow;
      const job = jobs.get(jobId);
      if (!job || job.attempt !== attempt || (job.state !== 'SCHEDULED' && job.state !== 'RUNNING')) return;
      for (const run of runCommandsOf({ ...job, hostIpc: hostIpc.has(job.queue) }, attempt, job.nodeIds, issuedAt)) {
        yield { topic: TOPICS.agentCommands, message: { key: run.nodeId, value: JSON.stringify(run), headers: row.headers } };
      }
    };
  },
};
