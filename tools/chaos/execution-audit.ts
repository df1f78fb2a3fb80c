import { TOPICS } from '@gantry/contracts';
import { KafkaSecurity, createKafka } from '@gantry/messaging';
import { withDb } from '@gantry/stack';
import { InvariantResult } from './invariants';

/** A lost attempt (NODE_LOST, PHANTOM) as its agent told it: each rank's start and end, and when the loss was declared. */
export interface LostAttempt {
  jobId: string;
  attempt: number;
  reason: string;
  lostAt: string;
  ranks: Array<{ nodeId: string; startedAt: string; end: string; startMs: number; endKnown: boolean }>;
}

/** One run of one rank as its agent told it: a RUNNING report, then (maybe) a final one. */
interface Execution {
  jobId: string;
  attempt: number;
  nodeId: string;
  start: number;
  /** The final report's time; else the latest it can have ended (see auditExecutions). */
  end: number;
  endKnown: boolean;
  /** The final report's state, when there was one. */
  finalState?: string;
}

interface Report {
  nodeId: string;
  jobId: string;
  attempt: number;
  state: string;
  at: number;
}

/** Every job report on the topic, read once from the beginning up to the end offsets as of the call. */
async function readAllReports(brokers: string, security: KafkaSecurity): Promise<Report[]> {
  const kafka = createKafka({ brokers: [brokers], clientId: 'gantry-chaos-audit', security });
  const ends = await kafka.withAdmin((admin) => admin.fetchTopicOffsets(TOPICS.jobReports));
  const pending = new Map(ends.filter((p) => Number(p.high) > Number(p.low)).map((p) => [p.partition, Number(p.high)]));
  const reports: Report[] = [];
  if (pending.size === 0) return reports;
  const consumer = kafka.rawConsumer({ groupId: `gantry-chaos-audit-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPICS.jobReports, fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`job reports not read within 120 s (${pending.size} partitions left)`)), 120_000);
    consumer
      .run({
        autoCommit: false,
        eachMessage: async ({ partition, message }) => {
          try {
            reports.push(JSON.parse(message.value!.toString()) as Report);
          } catch {
            // not a report: the dead-letter path's business, not this audit's
          }
          const end = pending.get(partition);
          if (end !== undefined && Number(message.offset) + 1 >= end) pending.delete(partition);
          if (pending.size === 0) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();
  return reports;
}

/**
 * None ran twice, as the agents saw it (the database's view is checked in invariants.ts): from every
 * RUNNING and final report, the executions of each job; two that overlap in time, other than the
 * ranks of one gang attempt, ran the job twice. An execution with no final report (its agent was
 * killed or stopped, or fenced itself) ended at the latest when its sleep did, or when its agent was
 * stopped, whichever came first. A report lost in a Kafka outage hides an execution, so this is a lower bound.
 */
export async function auditExecutions(
  brokers: string,
  security: KafkaSecurity,
  databaseUrl: string,
  agentStops: number[],
): Promise<{ results: InvariantResult[]; summary: Record<string, number>; finishedThenLost: string[]; lostAttempts: LostAttempt[] }> {
  const reports = await readAllReports(brokers, security);
  const { durations, placed, lost } = await withDb(databaseUrl, async (c) => {
    const d = await c.query<{ id: string; ms: string }>(`SELECT id, env->>'SIM_DURATION_MS' AS ms FROM jobs`);
    const p = await c.query<{ k: string }>(`SELECT job_id || '#' || attempt || '#' || node_id AS k FROM attempt_nodes`);
    // Attempts the control plane ended as lost (requeued or failed for NODE_LOST/PHANTOM), and when.
    const l = await c.query<{ job_id: string; attempt: number; reason: string; at: Date }>(
      `SELECT job_id, attempt, reason, at FROM job_events WHERE type = 'STATE_CHANGED' AND reason IN ('NODE_LOST', 'PHANTOM')`,
    );
    return { durations: new Map(d.rows.map((r) => [r.id, Number(r.ms ?? 1000)])), placed: new Set(p.rows.map((r) => r.k)), lost: l.rows };
  });
  const stops = [...agentStops].sort((a, b) => a - b);
  const open = new Map<string, Execution>();
  const executions: Execution[] = [];
  for (const r of reports.filter((x) => durations.has(x.jobId)).sort((a, b) => a.at - b.at)) {
    const k = `${r.jobId}#${r.attempt}#${r.nodeId}`;
    if (r.state === 'RUNNING') {
      const stop = stops.find((t) => t >= r.at) ?? Infinity;
      const e: Execution = {
        jobId: r.jobId,
        attempt: r.attempt,
        nodeId: r.nodeId,
        start: r.at,
        end: Math.min(r.at + durations.get(r.jobId)!, stop),
        endKnown: false,
      };
      open.set(k, e);
      executions.push(e);
    } else {
      const e = open.get(k);
      // A final report repeated for a finished attempt (answer to a repeated RUN) ends nothing new.
      if (e && !e.endKnown) {
        e.end = r.at;
        e.endKnown = true;
        e.finalState = r.state;
      }
    }
  }
  const byJob = new Map<string, Execution[]>();
  for (const e of executions) {
    let list = byJob.get(e.jobId);
    if (!list) byJob.set(e.jobId, (list = []));
    list.push(e);
  }
  const twice: string[] = [];
  for (const [jobId, list] of byJob) {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i];
        const b = list[j];
        const sameGangAttempt = a.attempt === b.attempt && a.nodeId !== b.nodeId;
        if (!sameGangAttempt && a.start < b.end && b.start < a.end) {
          twice.push(
            `${jobId}: attempt ${a.attempt} on ${a.nodeId} [${a.start}, ${a.end}${a.endKnown ? '' : '?'}] and attempt ${b.attempt} on ${b.nodeId} [${b.start}, ${b.end}${b.endKnown ? '' : '?'}]`,
          );
        }
      }
    }
  }
  const unplaced = executions
    .filter((e) => !placed.has(`${e.jobId}#${e.attempt}#${e.nodeId}`))
    .map((e) => `${e.jobId} attempt ${e.attempt} ran on ${e.nodeId}`);
  // A lost attempt whose every rank had in fact finished with SUCCEEDED before the loss was declared:
  // the work was done, its report was late or missed, and the job ran again (in sequence, not at once).
  const finishedThenLost: string[] = [];
  for (const l of lost) {
    const ranks = (byJob.get(l.job_id) ?? []).filter((e) => e.attempt === l.attempt);
    if (ranks.length > 0 && ranks.every((e) => e.finalState === 'SUCCEEDED' && e.end <= l.at.getTime())) {
      finishedThenLost.push(
        `${l.job_id} attempt ${l.attempt}: SUCCEEDED at ${Math.max(...ranks.map((e) => e.end))}, declared ${l.reason} at ${l.at.getTime()}`,
      );
    }
  }
  // Every lost attempt as its agent told it: when it started, how it ended (if it said), when the loss was declared.
  const lostAttempts: LostAttempt[] = lost.map((l) => {
    const ranks = (byJob.get(l.job_id) ?? []).filter((e) => e.attempt === l.attempt);
    return {
      jobId: l.job_id,
      attempt: l.attempt,
      reason: l.reason,
      lostAt: l.at.toISOString(),
      ranks: ranks.map((e) => ({
        nodeId: e.nodeId,
        startedAt: new Date(e.start).toISOString(),
        end: e.endKnown ? `${e.finalState} ${new Date(e.end).toISOString()}` : 'no final report',
        startMs: e.start,
        endKnown: e.endKnown,
      })),
    };
  });
  const mk = (name: string, bad: string[], detail: string): InvariantResult => ({
    name,
    ok: bad.length === 0,
    violations: bad.length,
    detail,
    examples: bad.slice(0, 10),
  });
  const summary = {
    reports: reports.length,
    executions: executions.length,
    withoutFinalReport: executions.filter((e) => !e.endKnown).length,
    /** Jobs whose agents ran more than one attempt (lost attempts placed again; overlap is what matters). */
    jobsWithSeveralAttemptsRun: [...byJob.values()].filter((l) => new Set(l.map((e) => e.attempt)).size > 1).length,
    /** The same rank of the same attempt started again on its node (an agent restart and a repeated RUN). */
    rankRestarts: executions.length - new Set(executions.map((e) => `${e.jobId}#${e.attempt}#${e.nodeId}`)).size,
    /** Attempts ended as lost (NODE_LOST, PHANTOM). */
    attemptsLost: lost.length,
    /** ... of which every rank had already reported SUCCEEDED before the loss: finished work run again. */
    finishedThenLost: finishedThenLost.length,
  };
  return {
    finishedThenLost: finishedThenLost.slice(0, 20),
    lostAttempts,
    results: [
      mk(
        "no job ran twice (agents' reports)",
        twice,
        `${executions.length} executions from ${reports.length} reports; ${summary.withoutFinalReport} without a final report (end bounded)`,
      ),
      mk('ran only where placed', unplaced, 'every (job, attempt, node) that reported RUNNING was placed there'),
    ],
    summary,
  };
}
