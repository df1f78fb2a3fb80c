import { randomUUID } from 'node:crypto';

/*
 * The part of autocannon 8's API this bench uses (the package ships no type declarations).
 * See node_modules/autocannon/README.md.
 */
interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  setupRequest?: (req: AutocannonRequest, context: object) => AutocannonRequest;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  amount?: number;
  overallRate?: number;
  timeout?: number;
  ignoreCoordinatedOmission?: boolean;
  excludeErrorStats?: boolean;
  headers?: Record<string, string>;
  requests: AutocannonRequest[];
}

export interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  resets: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
  latency: Record<string, number>;
  requests: Record<string, number> & { sent: number };
  [k: string]: unknown;
}

interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', fn: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): void;
  on(event: 'reqError', fn: (err: Error) => void): void;
  stop(): void;
}

const autocannon = require('autocannon') as (opts: AutocannonOptions) => AutocannonInstance;

/** One create request, the same body every time: only the Idempotency-Key differs. */
export interface CreateTarget {
  baseUrl: string;
  token: string;
  body: string;
  /** When set, called for every request's body instead of sending `body` (a job mix). */
  nextBody?: () => string;
}

export interface PhaseOptions {
  /** Total connections (split across lanes when paced). */
  connections: number;
  durationS: number;
  /** Stop after this many responses instead of after `durationS` (autocannon's `amount`). */
  amount?: number;
  /** Target creates/s for the whole phase; undefined = as fast as the connections allow. */
  rate?: number;
  /**
   * Paced phases run `lanes` autocannon instances, each with `rate / lanes` and started 1/lanes s
   * apart. autocannon paces a connection by sending its whole per-second quota back to back at each
   * one-second tick, and all connections of one instance tick together; staggered lanes spread the
   * load over the second so that "500/s" is closer to 500 arrivals spread over the second than to
   * one burst of 500 at the start of each second.
   */
  lanes?: number;
}

export interface Sample {
  /** ms since the phase started, when the response completed. */
  at: number;
  latencyMs: number;
  status: number;
}

export interface PhaseResult {
  samples: Sample[];
  errors: Record<string, number>;
  wallS: number;
  /** autocannon's own summaries, one per lane. */
  autocannon: AutocannonResult[];
}

/** Stops the running phase (Ctrl-C); the phase then resolves with what it has. */
let stopCurrent: (() => void) | null = null;
export function stopLoad(): void {
  stopCurrent?.();
}

/** POST /v1/jobs with a fresh Idempotency-Key per request, recording every response's latency. */
export async function runCreatePhase(target: CreateTarget, opts: PhaseOptions): Promise<PhaseResult> {
  const lanes = opts.rate === undefined ? 1 : Math.max(1, Math.min(opts.lanes ?? 1, opts.connections, opts.rate));
  const samples: Sample[] = [];
  const errors: Record<string, number> = {};
  const instances: AutocannonInstance[] = [];
  let stopped = false;
  stopCurrent = () => {
    stopped = true;
    for (const i of instances) if (typeof i.stop === 'function') i.stop();
  };
  const t0 = performance.now();
  const request: AutocannonRequest = {
    method: 'POST',
    path: '/v1/jobs',
    body: target.body,
    setupRequest: (req) => ({
      ...req,
      headers: { ...req.headers, 'Idempotency-Key': randomUUID() },
      ...(target.nextBody ? { body: target.nextBody() } : {}),
    }),
  };
  const startLane = (lane: number): Promise<AutocannonResult> => {
    const instance = autocannon({
      url: target.baseUrl,
      connections: split(opts.connections, lanes, lane),
      duration: opts.durationS,
      ...(opts.amount === undefined ? {} : { amount: split(opts.amount, lanes, lane) }),
      // Raw latencies: with a rate, autocannon otherwise back-fills synthetic samples at a 1 ms
      // interval for every slow response. The bench records its own samples anyway.
      ...(opts.rate === undefined ? {} : { overallRate: split(opts.rate, lanes, lane), ignoreCoordinatedOmission: true }),
      timeout: 10,
      headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
      requests: [request],
    });
    instance.on('response', (_c, status, _b, latencyMs) => {
      samples.push({ at: performance.now() - t0, latencyMs, status });
    });
    instance.on('reqError', (err) => {
      const k = err.message || String(err);
      errors[k] = (errors[k] ?? 0) + 1;
    });
    instances.push(instance);
    return Promise.resolve(instance);
  };
  const runs: Promise<AutocannonResult>[] = [];
  for (let lane = 0; lane < lanes && !stopped; lane++) {
    if (lane > 0) await sleep(1000 / lanes);
    if (!stopped) runs.push(startLane(lane));
  }
  const results = await Promise.all(runs);
  stopCurrent = null;
  return {
    samples,
    errors,
    wallS: (performance.now() - t0) / 1000,
    autocannon: results,
  };
}

/** Share `i` of `total` split into `parts` near-equal integers. */
function split(total: number, parts: number, i: number): number {
  return Math.floor(total / parts) + (i < total % parts ? 1 : 0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
