/**
 * Warms the stack before the open-loop curve, as bench:churn does before its phases: open-loop
 * rounds of `roundS` at `rate` until the broker's JIT compiler is quiet (warmUntilBrokerQuiet). A
 * fresh broker was still compiling a tenth of a core at the curve's 500/s step (2026-12-06). The
 * curve's own per-step warm-up (`BENCH_CURVE_WARMUP_S`) still comes before each counted window.
 */
import { BrokerWarmup, warmUntilBrokerQuiet } from '../api/broker-warmup';
import { runOpenLoop } from '../api/open-loop';

export interface StackWarmup extends BrokerWarmup {
  rate: number;
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
  if (opts.brokerPid === null || opts.maxS <= 0 || opts.rate <= 0) return null;
  const round = async () => {
    await runOpenLoop(target, { rate: opts.rate, durationS: opts.roundS, maxSockets: opts.maxSockets });
  };
  return { rate: opts.rate, ...(await warmUntilBrokerQuiet(opts.brokerPid, round, opts, check)) };
}
