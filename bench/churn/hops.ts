/**
 * Where a job's time goes between submit and start, and between a slot freeing and the next job
 * starting in it, hop by hop (issue 13: "measure each hop, fix the largest, repeat"). Every clock is
 * this host's: the database's (created_at, the placement's SCHEDULED event, finished_at), Kafka's
 * record timestamps (the RUN published by the relay) and the agents' (RUNNING and end reports).
 */
import { Client } from 'pg';
import { LatencySummary } from '../api/stats';
import { CommandWatch } from '../dispatch/command-watch';
import { summarise } from '../dispatch/dispatch-latency';
import { ReportWatch } from './report-watch';

export interface Hops {
  /** The client sent the POST -> the job's created_at (the gateway's clock when it took the create in, before its write). */
  sentToCreated: LatencySummary | null;
  /** Job created (taken in by the gateway; includes its write and commit) -> placed (its SCHEDULED event). */
  createdToPlaced: LatencySummary | null;
  /** Placed -> its RUN published on Kafka (the scheduler's outbox relay). */
  placedToRunPublished: LatencySummary | null;
  /** RUN published -> the agent's RUNNING (command consumer, signature check, spawn). */
  runPublishedToStarted: LatencySummary | null;
  /** The process ended (agent) -> the end applied in Postgres (reports topic, reconciler). */
  endedToApplied: LatencySummary | null;
  /**
   * A slot freed -> the next job placed: for each placement that had to wait for capacity, its
   * SCHEDULED time minus the latest end applied before it (jobs that found capacity free are left out).
   */
  freedToPlaced: LatencySummary | null;
}

interface Row {
  id: string;
  created_at: Date;
  finished_at: Date | null;
  placed_at: Date | null;
}

/** `sentAtMs`: when the client sent each job's POST, where known (the first hop). */
export async function hopsOf(db: Client, ids: string[], runs: CommandWatch, reports: ReportWatch, sentAtMs?: ReadonlyMap<string, number>): Promise<Hops> {
  const { rows } = await db.query<Row>(
    `SELECT j.id, j.created_at, j.finished_at,
       (SELECT min(e.at) FROM job_events e WHERE e.job_id = j.id AND e.to_state = 'SCHEDULED') AS placed_at
     FROM jobs j WHERE j.id = ANY($1::uuid[])`,
    [ids],
  );
  const sentToCreated: number[] = [];
  const createdToPlaced: number[] = [];
  const placedToRun: number[] = [];
  const runToStart: number[] = [];
  const endToApplied: number[] = [];
  for (const r of rows) {
    const placed = r.placed_at?.getTime() ?? null;
    const run = runs.dispatchedAt(r.id);
    const started = reports.startedAt(r.id);
    const ended = reports.endedAt(r.id);
    const sent = sentAtMs?.get(r.id);
    if (sent !== undefined) sentToCreated.push(r.created_at.getTime() - sent);
    if (placed !== null) createdToPlaced.push(placed - r.created_at.getTime());
    if (placed !== null && run !== null) placedToRun.push(run - placed);
    if (run !== null && started !== null) runToStart.push(started - run);
    if (ended !== null && r.finished_at) endToApplied.push(r.finished_at.getTime() - ended);
  }
  // Capacity freed (ends applied) and placements, in time order.
  const applied = rows
    .map((r) => r.finished_at?.getTime())
    .filter((t): t is number => t !== undefined)
    .sort((a, b) => a - b);
  const freedToPlaced: number[] = [];
  for (const r of rows) {
    const placed = r.placed_at?.getTime();
    if (placed === undefined) continue;
    // A job placed after it had waited for capacity: created before the last end applied before its placement.
    const k = lastAtOrBefore(applied, placed);
    if (k < 0 || r.created_at.getTime() >= applied[k]) continue;
    freedToPlaced.push(placed - applied[k]);
  }
  return {
    sentToCreated: summarise(sentToCreated),
    createdToPlaced: summarise(createdToPlaced),
    placedToRunPublished: summarise(placedToRun),
    runPublishedToStarted: summarise(runToStart),
    endedToApplied: summarise(endToApplied),
    freedToPlaced: summarise(freedToPlaced),
  };
}

/** Index of the last value <= t in ascending `sorted`, or -1. */
function lastAtOrBefore(sorted: number[], t: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}
