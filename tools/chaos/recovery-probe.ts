import { ServiceProcess, waitFor, withDb } from '@gantry/stack';

/** When, after a fault at t0, the system was healthy again (epoch ms; null: not within the deadline). */
export interface Recovery {
  /** First poll at which every service's /readyz answered 200. */
  readyAt: number | null;
  /** First RUNNING (or SUCCEEDED) of any job after readyAt: work flows again (a backlog may still hold new jobs back). */
  flowingAt: number | null;
  /** First RUNNING (or SUCCEEDED) of a job submitted after readyAt: new work gets through. */
  runningAt: number | null;
  /** runningAt - t0: the recovery time. */
  recoveryMs: number | null;
  /** Services whose /readyz was still not 200 at the deadline. */
  notReady: string[];
}

async function isReady(svc: ServiceProcess): Promise<boolean> {
  if (!svc.running) return false;
  try {
    const res = await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(2000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

export async function notReadyServices(services: ServiceProcess[]): Promise<string[]> {
  const ready = await Promise.all(services.map(isReady));
  return services.filter((_, i) => !ready[i]).map((s) => s.opts.name);
}

/** The first moment a job created at or after `since` reached RUNNING or SUCCEEDED, per its events. */
async function firstRunningSince(databaseUrl: string, since: number): Promise<number | null> {
  return withDb(databaseUrl, async (c) => {
    const { rows } = await c.query(
      `SELECT min(e.at) AS at FROM jobs j JOIN job_events e ON e.job_id = j.id AND e.to_state IN ('RUNNING', 'SUCCEEDED')
       WHERE j.created_at >= $1`,
      [new Date(since)],
    );
    return rows[0].at ? new Date(rows[0].at).getTime() : null;
  });
}

/** The first moment any job reached RUNNING or SUCCEEDED at or after `since`. */
async function firstTransitionSince(databaseUrl: string, since: number): Promise<number | null> {
  return withDb(databaseUrl, async (c) => {
    const { rows } = await c.query(`SELECT min(at) AS at FROM job_events WHERE at >= $1 AND to_state IN ('RUNNING', 'SUCCEEDED')`, [new Date(since)]);
    return rows[0].at ? new Date(rows[0].at).getTime() : null;
  });
}

/**
 * Healthy again means both: every /readyz green, and the pipeline works end to end for new work
 * (a job submitted after readiness returned was placed, dispatched and reported running).
 */
export async function measureRecovery(t0: number, services: ServiceProcess[], databaseUrl: string, timeoutMs: number): Promise<Recovery> {
  const deadline = t0 + timeoutMs;
  let notReady: string[] = [];
  let readyAt: number | null = null;
  try {
    readyAt = await waitFor(
      'every /readyz green',
      async () => {
        notReady = await notReadyServices(services);
        return notReady.length === 0 ? Date.now() : undefined;
      },
      { timeoutMs: Math.max(1, deadline - Date.now()), intervalMs: 200 },
    );
  } catch {
    return { readyAt: null, flowingAt: null, runningAt: null, recoveryMs: null, notReady };
  }
  let runningAt: number | null = null;
  let flowingAt: number | null = null;
  try {
    runningAt = await waitFor(
      'a job submitted after readiness running',
      async () => {
        flowingAt ??= await firstTransitionSince(databaseUrl, readyAt!);
        return flowingAt === null ? undefined : ((await firstRunningSince(databaseUrl, readyAt!)) ?? undefined);
      },
      { timeoutMs: Math.max(1, deadline - Date.now()), intervalMs: 250 },
    );
  } catch {
    // not recovered within the deadline
  }
  return { readyAt, flowingAt, runningAt, recoveryMs: runningAt === null ? null : runningAt - t0, notReady: [] };
}

/**
 * Steady state before a fault: every service ready and no job left waiting in QUEUED longer than
 * `maxQueuedMs` (the load fits the fleet easily, so a backlog means the last fault still echoes).
 */
export async function waitSteady(services: ServiceProcess[], databaseUrl: string, timeoutMs: number, maxQueuedMs = 10_000): Promise<boolean> {
  try {
    await waitFor(
      'steady state',
      async () => {
        if ((await notReadyServices(services)).length) return false;
        return withDb(databaseUrl, async (c) => {
          const { rows } = await c.query(`SELECT count(*)::int AS n FROM jobs WHERE state = 'QUEUED' AND created_at < now() - make_interval(secs => $1)`, [
            maxQueuedMs / 1000,
          ]);
          return rows[0].n === 0;
        });
      },
      { timeoutMs, intervalMs: 500 },
    );
    return true;
  } catch {
    return false;
  }
}
