import type { PhaseResult } from './load';

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

export interface PhaseSummary {
  /** Responses with a 2xx status per second of the phase. */
  createsPerS: number;
  /** All responses (any status) per second. */
  responsesPerS: number;
  /** Lowest and highest whole second, in 2xx responses, ignoring the first and last second. */
  perSecondMin: number;
  perSecondMax: number;
  latencyMs: LatencySummary;
  total: number;
  ok2xx: number;
  non2xx: number;
  statusCounts: Record<string, number>;
  /** Connection errors and timeouts (no HTTP response at all). */
  errors: number;
  errorKinds: Record<string, number>;
  durationS: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** p50, p99, max and count of unsorted values (bench:churn and its Slurm baseline). */
export function latencies(values: number[]): { p50: number; p99: number; max: number; n: number } {
  const s = [...values].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] ?? NaN, n: s.length };
}

export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

export function summarisePhase(r: PhaseResult, durationS: number): PhaseSummary {
  const ok = r.samples.filter((s) => s.status >= 200 && s.status < 300);
  const lat = ok.map((s) => s.latencyMs).sort((a, b) => a - b);
  const statusCounts: Record<string, number> = {};
  for (const s of r.samples) statusCounts[s.status] = (statusCounts[s.status] ?? 0) + 1;
  const perSecond = new Map<number, number>();
  for (const s of ok) perSecond.set(Math.floor(s.at / 1000), (perSecond.get(Math.floor(s.at / 1000)) ?? 0) + 1);
  const seconds = [...perSecond.keys()].sort((a, b) => a - b);
  const inner = seconds.slice(1, -1).map((k) => perSecond.get(k)!);
  return {
    createsPerS: ok.length / durationS,
    responsesPerS: r.samples.length / durationS,
    perSecondMin: inner.length ? Math.min(...inner) : NaN,
    perSecondMax: inner.length ? Math.max(...inner) : NaN,
    latencyMs: {
      count: lat.length,
      mean: lat.reduce((a, b) => a + b, 0) / Math.max(1, lat.length),
      p50: percentile(lat, 50),
      p90: percentile(lat, 90),
      p95: percentile(lat, 95),
      p99: percentile(lat, 99),
      p999: percentile(lat, 99.9),
      max: lat.length ? lat[lat.length - 1] : NaN,
    },
    total: r.samples.length,
    ok2xx: ok.length,
    non2xx: r.samples.length - ok.length,
    statusCounts,
    errors: Object.values(r.errors).reduce((a, b) => a + b, 0),
    errorKinds: r.errors,
    durationS,
  };
}

/** A plain-text table: first row is the header. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  const line = (r: string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
