/**
 * Submits a trace through the gateway on its schedule: each job at t0 + submitAtMs, as its team's
 * owner, with an idempotency key of the run and the trace id (a retried create never doubles a
 * job). At most `maxInFlight` creates wait for an answer at once; how late each went out is kept,
 * so a run whose client fell behind its trace shows it.
 */
import { percentile } from '../api/stats';
import { TraceJob } from './trace';

export const JOB_NAME_PREFIX = 'fair-';

/** The POST /v1/jobs body of a trace job: the sleep executor runs it for its runtime. */
export function jobBody(j: TraceJob): Record<string, unknown> {
  return {
    queue: j.team,
    name: `${JOB_NAME_PREFIX}${j.team}`,
    image: 'none',
    command: ['true'],
    env: { SIM_DURATION_MS: String(j.runtimeMs) },
    labels: { trace: j.id },
    // Four cores and 32 GiB per GPU fit every GPU node of the simulated fleet: GPUs are what binds.
    resources: { gpus: j.gpus, cpuCores: j.gpus * 4, memoryMiB: j.gpus * 32768 },
    nodes: j.nodes,
    maxRuntimeSeconds: j.maxRuntimeSeconds,
  };
}

export interface ReplayResult {
  t0Ms: number;
  created: number;
  /** Answers of 429/503, each sent again after Retry-After. */
  refusals: number;
  lateMs: { p50: number; p99: number; max: number };
}

interface ReplayOptions {
  gatewayUrl: string;
  tokenOf: (owner: string) => string;
  runTag: string;
  maxInFlight: number;
  check: () => void;
}

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, Math.max(0, ms)));

async function create(o: ReplayOptions, j: TraceJob, count: { refusals: number }): Promise<void> {
  for (let tries = 0; ; tries++) {
    o.check();
    let res: Response;
    try {
      res = await fetch(`${o.gatewayUrl}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${o.tokenOf(j.owner)}`, 'content-type': 'application/json', 'idempotency-key': `${o.runTag}-${j.id}` },
        body: JSON.stringify(jobBody(j)),
      });
    } catch (e) {
      if (tries >= 5) throw e;
      await sleep(500);
      continue;
    }
    if (res.status === 201 || res.status === 200) {
      await res.arrayBuffer();
      return;
    }
    const text = await res.text();
    if ((res.status === 429 || res.status === 503) && tries < 20) {
      count.refusals++;
      await sleep(1000 * Math.min(5, Number(res.headers.get('retry-after')) || 1));
      continue;
    }
    throw new Error(`POST /v1/jobs for ${j.id} answered ${res.status}: ${text}`);
  }
}

export async function replayTrace(trace: readonly TraceJob[], o: ReplayOptions): Promise<ReplayResult> {
  const t0Ms = Date.now();
  const late: number[] = [];
  const count = { refusals: 0 };
  const inFlight = new Set<Promise<void>>();
  let failure: unknown = null;
  for (const j of trace) {
    o.check();
    if (failure) throw failure;
    await sleep(t0Ms + j.submitAtMs - Date.now());
    while (inFlight.size >= o.maxInFlight) await Promise.race(inFlight);
    late.push(Date.now() - (t0Ms + j.submitAtMs));
    const p: Promise<void> = create(o, j, count)
      .catch((e) => {
        failure ??= e;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  if (failure) throw failure;
  const sorted = late.sort((a, b) => a - b);
  return {
    t0Ms,
    created: trace.length,
    refusals: count.refusals,
    lateMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN },
  };
}
