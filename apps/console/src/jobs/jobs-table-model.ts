import type { Job, JobState, JobStreamEvent } from '@gantry/client';

/** The jobs table's filter, as GET /v1/jobs takes it. */
export interface JobFilter {
  queue?: string;
  state?: JobState;
  owner?: string;
}

export const TERMINAL_STATES: readonly JobState[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

export function matchesFilter(job: Job, f: JobFilter): boolean {
  return (!f.queue || job.queue === f.queue) && (!f.state || job.state === f.state) && (!f.owner || job.owner === f.owner);
}

/** The listing's order: (createdAt, id) ascending, as the API pages it. */
function before(a: Job, b: Job): boolean {
  return a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);
}

export interface EventOutcome {
  rows: Job[];
  /** A job the table lacks that may belong in it: fetch it and offer it to insertJob. */
  fetch: string | null;
}

/**
 * One live event applied to the rows (pure). A state change applies only to a row in the state it
 * leaves, so events older than the listing (the stream opens before the listing is read) change
 * nothing, and a retried attempt's changes replay in order. A row that leaves the state filtered
 * on leaves the table; a job that enters the table's scope (created, or entering the filtered
 * state) is to be fetched.
 */
export function applyEvent(rows: readonly Job[], e: JobStreamEvent, filter: JobFilter): EventOutcome {
  const i = rows.findIndex((r) => r.id === e.jobId);
  if (i < 0) {
    const enters =
      e.type === 'CREATED' ? !filter.state || filter.state === 'QUEUED' : e.type === 'STATE_CHANGED' && !!filter.state && e.toState === filter.state;
    return { rows: rows as Job[], fetch: enters ? e.jobId : null };
  }
  const row = rows[i];
  let next: Job | null = null;
  if (e.type === 'STATE_CHANGED' && e.toState && e.fromState === row.state && (e.attempt ?? row.attempt) >= row.attempt) {
    const terminal = TERMINAL_STATES.includes(e.toState);
    next = {
      ...row,
      state: e.toState,
      attempt: e.attempt ?? row.attempt,
      nodeIds: e.nodeIds ?? row.nodeIds,
      updatedAt: e.at,
      pendingReason: e.toState === 'QUEUED' ? row.pendingReason : null,
      startedAt: e.toState === 'RUNNING' ? (row.startedAt ?? e.at) : row.startedAt,
      finishedAt: terminal ? e.at : row.finishedAt,
      reason: e.reason ?? row.reason,
    };
  } else if (e.type === 'CANCEL_REQUESTED' && !row.cancelRequested) {
    next = { ...row, cancelRequested: true, updatedAt: e.at };
  }
  if (!next) return { rows: rows as Job[], fetch: null };
  const out = rows.slice();
  if (matchesFilter(next, filter)) out[i] = next;
  else out.splice(i, 1);
  return { rows: out, fetch: null };
}

/**
 * A fetched job placed in the rows at its listing position, when the listing has reached that
 * position (`complete`: no further page; else only before the last row). Returns null when it does
 * not belong (filter) or lies beyond what was listed (a later page will show it).
 */
export function insertJob(rows: readonly Job[], job: Job, filter: JobFilter, complete: boolean): Job[] | null {
  if (!matchesFilter(job, filter)) return null;
  const existing = rows.findIndex((r) => r.id === job.id);
  if (existing >= 0) {
    const out = rows.slice();
    out[existing] = job;
    return out;
  }
  const last = rows[rows.length - 1];
  if (!complete && (!last || !before(job, last))) return null;
  const at = rows.findIndex((r) => before(job, r));
  const out = rows.slice();
  out.splice(at < 0 ? out.length : at, 0, job);
  return out;
}
