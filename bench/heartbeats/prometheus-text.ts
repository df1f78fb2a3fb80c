/** Just enough of the Prometheus text format for the benchmark: samples by name and labels. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parsePrometheus(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** A service's /metrics, parsed; no samples when it does not answer within `timeoutMs`. */
export async function scrapeMetrics(serviceUrl: string, timeoutMs = 5000): Promise<Sample[]> {
  const text = await fetch(`${serviceUrl}/metrics`, { signal: AbortSignal.timeout(timeoutMs) })
    .then((r) => r.text())
    .catch(() => '');
  return parsePrometheus(text);
}

export function sum(samples: Sample[], name: string): number {
  return samples.filter((s) => s.name === name).reduce((a, s) => a + s.value, 0);
}

/** The sum of a metric's samples per value of one label. */
export function sumByLabel(samples: Sample[], name: string, label: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of samples) if (s.name === name) out.set(s.labels[label], (out.get(s.labels[label]) ?? 0) + s.value);
  return out;
}

/** Cumulative bucket counts of a histogram, by upper bound. */
export function buckets(samples: Sample[], name: string): Map<number, number> {
  const m = new Map<number, number>();
  for (const s of samples) if (s.name === `${name}_bucket`) m.set(s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value);
  return m;
}

/** The q-quantile of the observations between two snapshots of a histogram, interpolated within its bucket. */
export function histogramQuantile(before: Map<number, number>, after: Map<number, number>, q: number): number | null {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts[counts.length - 1] ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      const lo = i === 0 ? 0 : bounds[i - 1];
      const hi = bounds[i];
      if (!Number.isFinite(hi)) return lo;
      const below = i === 0 ? 0 : counts[i - 1];
      return lo + ((hi - lo) * (rank - below)) / Math.max(1, counts[i] - below);
    }
  }
  return null;
}
