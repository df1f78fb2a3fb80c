/**
 * Warms the stack before the open-loop curve, as bench:churn does before its phases: rounds of
 * open-loop creates until the broker's JIT compiler is quiet (under `jitQuietCores` of a core over
 * the last three rounds) or `maxS` have passed. A broker started for the bench spends its first
 * minutes compiling (a tenth of a core at the curve's 500/s step on 2026-12-06), which the
 * long-running broker users meet has behind it; the same rounds warm the services' own JIT. The
 * curve's own per-step warm-up (`BENCH_CURVE_WARMUP_S`) still comes before each counted window.
 */
import { jitCpuSeconds } from '../api/infra';
import { runOpenLoop } from '../api/open-loop';

export interface StackWarmup {
  rate: number;
  rounds: number;
  seconds: number;
  /** CPU seconds the broker's JIT compiler threads used over the rounds. */
  jitS: number;
  /** Its share of one core over the last three rounds. */
  lastRoundsJitCores: number;
  quiet: boolean;
}

export interface StackWarmupOptions {
  brokerPid: number | null;
  rate: number;
  roundS: number;
  maxS: number;
  jitQuietCores: number;
  maxSockets: number;
}

export async function warmStack(
  target: { baseUrl: string; token: string; body: (i: number) => string },
  opts: StackWarmupOptions,
  check: () => void,
): Promise<StackWarmup | null> {
  const pid = opts.brokerPid;
  if (pid === null || opts.maxS <= 0 || opts.rate <= 0) return null;
  const t0 = performance.now();
  const out: StackWarmup = { rate: opts.rate, rounds: 0, seconds: 0, jitS: 0, lastRoundsJitCores: Number.NaN, quiet: false };
  const last: Array<{ jit: number; wallS: number }> = [];
  while (!out.quiet && (performance.now() - t0) / 1000 < opts.maxS) {
    check();
    const [jit0, round0] = [jitCpuSeconds(pid), performance.now()];
    await runOpenLoop(target, { rate: opts.rate, durationS: opts.roundS, maxSockets: opts.maxSockets });
    const jit = jitCpuSeconds(pid) - jit0;
    out.rounds++;
    out.jitS += jit;
    last.push({ jit, wallS: (performance.now() - round0) / 1000 });
    if (last.length > 3) last.shift();
    out.lastRoundsJitCores = last.reduce((x, r) => x + r.jit, 0) / Math.max(last.reduce((x, r) => x + r.wallS, 0), 0.1);
    out.quiet = last.length === 3 && out.lastRoundsJitCores < opts.jitQuietCores;
  }
  out.seconds = (performance.now() - t0) / 1000;
  return out;
}
