// The benches' open-loop generator, reused rather than written twice (both are tools; neither is a dependency of anything).
/* eslint-disable-next-line @nx/enforce-module-boundaries */
import { OpenLoopResult, runOpenLoop } from '../../bench/api/open-loop';

/** One create the overload fault sent, and its answer (status null: none came: refused, reset or timed out). */
export interface OverloadRecord {
  key: string;
  gateway: number;
  dueAtMs: number;
  status: number | null;
  /** From the request's due time to its answer, ms (null without an answer). */
  latencyMs: number | null;
  jobId: string | null;
  failure?: string;
}

export interface OverloadSummary {
  offeredPerS: number;
  durationS: number;
  due: number;
  /** Answers by HTTP status. */
  byStatus: Record<string, number>;
  /** Requests with no answer, by kind (ECONNREFUSED, ECONNRESET, TIMEOUT). */
  noAnswer: Record<string, number>;
  acceptedPerS: number;
  /** Accepted creates, from due time to answer: p50 / p99 / max ms. */
  acceptedLatencyMs: { p50: number | null; p99: number | null; max: number | null };
  /** Refusals (429/503), from due time to answer: p99 ms (a refusal should be quick). */
  refusedP99Ms: number | null;
  /** How far the generator itself fell behind its schedule (event loop busy), ms. */
  maxSendLagMs: number;
}

const quantile = (sorted: number[], q: number): number | null =>
  sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]) : null;

/**
 * The overload fault's client: `rate` creates/s (a multiple of the sustainable rate), open-loop,
 * split evenly over the gateways, each with an Idempotency-Key the invariants can find again
 * (bench/api/open-loop.ts: requests leave on schedule whatever is outstanding, as a crowd of
 * independent clients does). The jobs are short CPU sleeps, so the accepted ones drain quickly.
 */
export class Overload {
  readonly records: OverloadRecord[] = [];

  constructor(private readonly opts: { gatewayUrls: string[]; token: string; rate: number; durationS: number; keyPrefix: string; maxRetries: number }) {}

  get rate(): number {
    return this.opts.rate;
  }

  get durationS(): number {
    return this.opts.durationS;
  }

  async run(): Promise<OverloadSummary> {
    const o = this.opts;
    const n = o.gatewayUrls.length;
    const body = JSON.stringify({
      name: 'chaos-overload',
      image: 'none',
      command: ['sleep'],
      env: { SIM_DURATION_MS: '200' },
      maxRetries: o.maxRetries,
      labels: { chaos: 'overload' },
      resources: { gpus: 0, cpuCores: 1, memoryMiB: 256 },
    });
    const keyOf = (g: number, i: number) => `${o.keyPrefix}-${g}-${i}`;
    const results: OpenLoopResult[] = await Promise.all(
      o.gatewayUrls.map((baseUrl, g) =>
        runOpenLoop(
          { baseUrl, token: o.token, body: () => body, idempotencyKey: (i) => keyOf(g, i) },
          { rate: o.rate / n, durationS: o.durationS, maxSockets: 512, timeoutMs: 10_000 },
        ),
      ),
    );
    results.forEach((r, g) => {
      for (const s of r.samples)
        this.records.push({ key: keyOf(g, s.index), gateway: g, dueAtMs: s.dueAtMs, status: s.status, latencyMs: Math.round(s.latencyMs), jobId: s.jobId });
      for (const f of r.failures)
        this.records.push({ key: keyOf(g, f.index), gateway: g, dueAtMs: f.dueAtMs, status: null, latencyMs: null, jobId: null, failure: f.kind });
    });
    const byStatus: Record<string, number> = {};
    const noAnswer: Record<string, number> = {};
    for (const r of this.records) {
      if (r.status === null) noAnswer[r.failure ?? '?'] = (noAnswer[r.failure ?? '?'] ?? 0) + 1;
      else byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    }
    const accepted = this.records
      .filter((r) => r.status !== null && r.status >= 200 && r.status < 300)
      .map((r) => r.latencyMs!)
      .sort((a, b) => a - b);
    const refused = this.records
      .filter((r) => r.status === 429 || r.status === 503)
      .map((r) => r.latencyMs!)
      .sort((a, b) => a - b);
    return {
      offeredPerS: o.rate,
      durationS: o.durationS,
      due: results.reduce((a, r) => a + r.due, 0),
      byStatus,
      noAnswer,
      acceptedPerS: Math.round((accepted.length / o.durationS) * 10) / 10,
      acceptedLatencyMs: { p50: quantile(accepted, 0.5), p99: quantile(accepted, 0.99), max: accepted.length ? accepted[accepted.length - 1] : null },
      refusedP99Ms: quantile(refused, 0.99),
      maxSendLagMs: Math.round(Math.max(0, ...results.map((r) => r.maxSendLagMs))),
    };
  }
}
