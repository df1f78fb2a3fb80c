/**
 * Submit -> RUN at a series of open-loop rates (issue 13): what a user meets at 1 job/s as much as
 * at 500/s. Every request is due at its scheduled time whatever the gateway did with the ones before
 * (bench/api/open-loop.ts), and both latencies are counted from that due time:
 *   - POST: due -> 201 answered;
 *   - dispatch: due -> the job's RUN command published on Kafka (its record timestamp).
 * Each step runs `warmupS + measureS` seconds; only requests due after the warm-up count. Between
 * steps the bench waits until every RUN of the step has been seen (or `settleS` passed).
 */
import { CpuUse } from '../api/infra';
import { LatencySummary } from '../api/stats';
import { OpenLoopResult, measuredPart, runOpenLoop } from '../api/open-loop';
import { CommandWatch } from './command-watch';
import { DoorRefusals, refusalsBetween } from './door-refusals';
import { LatencyWindow, latencyWindows, summarise } from './dispatch-latency';

export interface CurveStep {
  rate: number;
  /** Requests due in the measured window. */
  due: number;
  created: number;
  non2xx: number;
  /** No HTTP answer at all: connection refused or reset, timeout. */
  connectionErrors: number;
  errorKinds: Record<string, number>;
  postMs: LatencySummary | null;
  /** Due -> RUN published, over the created jobs whose RUN was seen. */
  dispatchMs: LatencySummary | null;
  /** The seconds (by due time) with the slowest submit -> RUN, worst first: when a tail comes in one burst, when it happened. */
  worstSeconds: LatencyWindow[];
  /**
   * Why the non-2xx answers came: the gateway's door (its limit on creates in progress, its
   * event-loop shedding; counted by the gateway from the end of the warm-up to the step's end, so
   * approximate at both edges) and every answer by HTTP status (admission waits and shedding
   * behind the door are 503s too, rate limits 429). Absent in older runs.
   */
  refused?: DoorRefusals & { byStatus: Record<string, number> };
  /** Created jobs whose RUN was not seen within the settle time. */
  notDispatched: number;
  /**
   * Non-2xx answers per REFUSAL_WINDOW_S window of due time over the whole step, warm-up included:
   * whether a step refuses while the stack takes up the new rate (its first seconds) or throughout.
   * Absent in older runs.
   */
  refusedByWindow?: number[];
  /** How far the generator itself fell behind its schedule (its own event loop), ms. */
  maxSendLagMs: number;
  /** CPU per process over the counted window (from the end of the warm-up to the last send). */
  cpu: CpuUse;
}

export interface CurveOptions {
  rates: number[];
  warmupS: number;
  measureS: number;
  settleS: number;
  maxSockets: number;
}

/** Starts a CPU measurement; the function it returns ends it. */
export type CpuWindow = () => () => CpuUse;

export async function runCurve(
  target: { baseUrl: string; token: string; body: (i: number) => string },
  watch: CommandWatch,
  opts: CurveOptions,
  cpuWindow: CpuWindow,
  say: (msg: string) => void,
  check: () => void,
  /** The gateway's door refusals so far, read at the end of each warm-up and of each step. */
  readRefusals: () => Promise<DoorRefusals>,
): Promise<CurveStep[]> {
  const steps: CurveStep[] = [];
  for (const rate of opts.rates) {
    check();
    say(`curve: ${rate}/s for ${opts.warmupS + opts.measureS} s (first ${opts.warmupS} s not counted)`);
    let endCpu: (() => CpuUse) | null = null;
    let refusedBefore: Promise<DoorRefusals> | null = null;
    const warmedUp = setTimeout(() => {
      endCpu = cpuWindow();
      refusedBefore = readRefusals();
    }, opts.warmupS * 1000);
    const run = await runOpenLoop(target, { rate, durationS: opts.warmupS + opts.measureS, maxSockets: opts.maxSockets });
    clearTimeout(warmedUp);
    const cpu = (endCpu ?? cpuWindow())();
    const door = refusalsBetween(await (refusedBefore ?? readRefusals()), await readRefusals());
    const { byStatus, ...measured } = await measure(run, rate, watch, opts, check);
    const step: CurveStep = { ...measured, refused: { ...door, byStatus }, cpu };
    say(
      `curve: ${rate}/s -> POST p99 ${fmtMs(step.postMs?.p99)}, submit -> RUN p50 ${fmtMs(step.dispatchMs?.p50)} p99 ${fmtMs(step.dispatchMs?.p99)}; ` +
        `${step.non2xx} non-2xx (${door.door} by the door's limit, ${door.eventLoop} by its event-loop shedding), ${step.connectionErrors} connection errors, ${step.notDispatched} not dispatched`,
    );
    if (step.refusedByWindow?.some((n) => n > 0))
      say(`curve: ${rate}/s non-2xx per ${REFUSAL_WINDOW_S} s from the step's start (warm-up included): ${step.refusedByWindow.join(' ')}`);
    const worst = step.worstSeconds[0];
    if (worst) say(`curve: ${rate}/s slowest second due at ${worst.at}: ${worst.jobs} jobs, max ${worst.max} ms`);
    steps.push(step);
  }
  return steps;
}

async function measure(
  run: OpenLoopResult,
  rate: number,
  watch: CommandWatch,
  opts: CurveOptions,
  check: () => void,
): Promise<Omit<CurveStep, 'cpu' | 'refused'> & { byStatus: Record<string, number> }> {
  const measured = measuredPart(run, Math.round(rate * opts.warmupS));
  const counted = measured.samples;
  const created = counted.filter((s) => s.status >= 200 && s.status < 300 && s.jobId);
  const settleBy = Date.now() + opts.settleS * 1000;
  while (Date.now() < settleBy && created.some((s) => watch.dispatchedAt(s.jobId!) === null)) {
    check();
    await new Promise((r) => setTimeout(r, 200));
  }
  const dispatched: Array<{ dueMs: number; ms: number }> = [];
  for (const s of created) {
    const at = watch.dispatchedAt(s.jobId!);
    if (at !== null) dispatched.push({ dueMs: s.dueAtMs, ms: at - s.dueAtMs });
  }
  const dispatch = dispatched.map((d) => d.ms);
  const firstDue = dispatched.reduce((min, d) => Math.min(min, d.dueMs), Infinity);
  const worstSeconds = latencyWindows(dispatched, firstDue, 1_000)
    .sort((a, b) => b.max - a.max)
    .slice(0, WORST_SECONDS);
  const byStatus: Record<string, number> = {};
  for (const s of counted) if (s.status < 200 || s.status >= 300) byStatus[s.status] = (byStatus[s.status] ?? 0) + 1;
  const refusedByWindow = Array.from({ length: Math.ceil((opts.warmupS + opts.measureS) / REFUSAL_WINDOW_S) }, () => 0);
  // Request i is due i / rate seconds after the step's start (open-loop schedule).
  for (const x of run.samples) {
    if (x.status >= 200 && x.status < 300) continue;
    refusedByWindow[Math.min(refusedByWindow.length - 1, Math.floor(x.index / (rate * REFUSAL_WINDOW_S)))]++;
  }
  const failures = measured.failures;
  const errorKinds = measured.errors;
  return {
    rate,
    due: counted.length + failures.length,
    created: created.length,
    non2xx: counted.length - created.length,
    connectionErrors: failures.length,
    errorKinds,
    postMs: summarise(counted.filter((s) => s.status >= 200 && s.status < 300).map((s) => s.latencyMs)),
    dispatchMs: summarise(dispatch),
    worstSeconds,
    notDispatched: created.length - dispatch.length,
    refusedByWindow,
    maxSendLagMs: Math.round(run.maxSendLagMs),
    byStatus,
  };
}

const WORST_SECONDS = 5;
const REFUSAL_WINDOW_S = 5;
const fmtMs = (v: number | undefined) => (v === undefined ? '-' : `${Math.round(v)} ms`);
