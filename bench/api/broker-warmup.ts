/**
 * Rounds of load until a broker started for a bench has stopped compiling: its JIT compiler
 * threads used under `jitQuietCores` of a core over the last three rounds (it compiles in bursts,
 * and one quiet round was followed by 0.8 CPU s of compiling in bench:churn's stream), or `maxS`
 * have passed. A fresh broker spends its first minutes compiling (the `kafka JIT` line), which the
 * long-running broker users meet has behind it; the same rounds warm the services' own JIT. Shared
 * by bench:churn (serial rounds of jobs) and bench:dispatch (open-loop rounds before its curve).
 */
import { jitCpuSeconds } from './infra';

export interface BrokerWarmup {
  rounds: number;
  seconds: number;
  /** CPU seconds the broker's JIT compiler threads used over the rounds. */
  jitS: number;
  /** Its share of one core over the last three rounds. */
  lastRoundsJitCores: number;
  quiet: boolean;
}

export async function warmUntilBrokerQuiet(
  brokerPid: number,
  round: () => Promise<void>,
  opts: { maxS: number; jitQuietCores: number },
  check: () => void = () => undefined,
): Promise<BrokerWarmup> {
  const t0 = performance.now();
  const out: BrokerWarmup = { rounds: 0, seconds: 0, jitS: 0, lastRoundsJitCores: Number.NaN, quiet: false };
  const last: Array<{ jit: number; wallS: number }> = [];
  while (!out.quiet && (performance.now() - t0) / 1000 < opts.maxS) {
    check();
    const [jit0, round0] = [jitCpuSeconds(brokerPid), performance.now()];
    await round();
    const jit = jitCpuSeconds(brokerPid) - jit0;
    out.rounds++;
    out.jitS += jit;
    last.push({ jit, wallS: (performance.now() - round0) / 1000 });
    if (last.length > 3) last.shift();
    out.lastRoundsJitCores =
      last.reduce((x, r) => x + r.jit, 0) /
      Math.max(
        last.reduce((x, r) => x + r.wallS, 0),
        0.1,
      );
    out.quiet = last.length === 3 && out.lastRoundsJitCores < opts.jitQuietCores;
  }
  out.seconds = (performance.now() - t0) / 1000;
  return out;
}
