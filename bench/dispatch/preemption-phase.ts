/**
 * bench:dispatch's `preemption` phase (issue 17, ADR 0026): the whole fleet is filled with low-band
 * work, then submissions arrive at BENCH_PREEMPT_RATE/s for BENCH_PREEMPT_S s, BENCH_PREEMPT_HIGH_SHARE
 * of them (5 %) 8-GPU jobs of a high band in a `lowerPriority` queue, the rest one-GPU low-band jobs
 * that can only queue. Each high-band job must end a low-band attempt to start. Per high-band job:
 * submit -> KILL (its victims' PREEMPTION_REQUESTED, written with their KILLs to the outbox in one
 * transaction), KILL -> RUN (its RUN's Kafka timestamp: the victims' grace, their reports, a cycle),
 * and submit -> RUN, as p50/p99.
 */
import { Client } from 'pg';
import { TERMINAL_STATES } from '@gantry/domain';
import { runCreatePhase } from '../api/load';
import { runOpenLoop } from '../api/open-loop';
import { percentile } from '../api/stats';
import { CommandWatch } from './command-watch';

export const PREEMPT_LOW_JOB_NAME = 'bench-dispatch-preempt-low';
export const PREEMPT_FILL_JOB_NAME = 'bench-dispatch-preempt-fill';
export const PREEMPT_HIGH_JOB_NAME = 'bench-dispatch-preempt-high';
export const PREEMPT_LOW_QUEUE = 'bench-low';
export const PREEMPT_HIGH_QUEUE = 'bench-high';

export interface PreemptionSettings {
  rate: number;
  durationS: number;
  highShare: number;
  /** How long a high-band job runs, ms (the low-band ones run for an hour: they end only when preempted). */
  highRunMs: number;
  /** The scheduler's GANTRY_PREEMPTION_GRACE_MS, for the report. */
  graceMs: number;
  /** How long a low-band job takes to stop once told to (the sleep executor's SIM_STOP_MS; past the grace it is killed). */
  stopMs: number;
  /** How long to wait after the phase for the last high-band jobs to start, s. */
  settleS: number;
  maxSockets: number;
  fillConnections: number;
}

export interface Percentiles {
  p50: number;
  p99: number;
  max: number;
}

export interface PreemptionResult {
  settings: PreemptionSettings;
  /** Low-band attempts that filled the fleet before the phase (one per GPU node, the node's GPUs each). */
  filled: number;
  submitted: { high: number; low: number; failed: number };
  /** High-band jobs that preempted, that started without (capacity freed by an earlier victim), that never started in the phase. */
  high: { preempted: number; startedWithout: number; notStarted: number };
  victims: number;
  submitToKillMs: Percentiles | null;
  killToRunMs: Percentiles | null;
  submitToRunMs: Percentiles | null;
}

export interface PreemptionDeps {
  gatewayUrl: string;
  adminToken: string;
  token: string;
  db: Client;
  watch: CommandWatch;
  api: (method: string, path: string, body?: unknown) => Promise<{ status: number; json: Record<string, unknown> | null }>;
  until: <T>(what: string, timeoutMs: number, probe: () => Promise<T | false | undefined>, intervalMs?: number) => Promise<T>;
  say: (msg: string) => void;
}

function job(name: string, queue: string, gpus: number, runMs: number, stopMs = 0): string {
  return JSON.stringify({
    name,
    queue,
    image: 'none',
    command: ['true'],
    env: { SIM_DURATION_MS: String(runMs), SIM_STOP_MS: String(stopMs) },
    resources: { gpus, cpuCores: gpus, memoryMiB: 2048 * gpus },
  });
}

function percentiles(values: number[]): Percentiles | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p99: percentile(s, 99), max: s[s.length - 1] };
}

/**
 * Cancels what earlier phases left (the backlog's 20,000 one-GPU jobs sleep an hour: packed best-fit
 * onto the 4-GPU nodes, they kept 5,000 of them from taking a fill job, and the fill never finished)
 * and waits until every GPU is free again.
 */
async function emptyTheFleet(d: PreemptionDeps): Promise<void> {
  const live = (await d.db.query(`SELECT id FROM jobs WHERE NOT (state = ANY($1::text[]))`, [[...TERMINAL_STATES]])).rows.map((r: { id: string }) => r.id);
  if (live.length > 0) {
    d.say(`preemption: cancelling ${live.length} jobs earlier phases left`);
    const next = live[Symbol.iterator]();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        for (let r = next.next(); !r.done; r = next.next()) {
          const answer = await d.api('POST', `/v1/jobs/${r.value}/cancel`);
          if (answer.status >= 300 && answer.status !== 409) throw new Error(`cancel ${r.value}: ${answer.status} ${JSON.stringify(answer.json)}`);
        }
      }),
    );
  }
  await d.until(
    'every GPU free',
    900_000,
    async () => {
      const [r] = (await d.db.query(`SELECT coalesce(sum(gpus_allocated), 0)::int AS n FROM nodes`)).rows;
      return r.n === 0;
    },
    1000,
  );
}

export async function runPreemptionPhase(d: PreemptionDeps, settings: PreemptionSettings): Promise<PreemptionResult> {
  for (const [name, priority, preemption] of [
    [PREEMPT_LOW_QUEUE, 10, 'never'],
    [PREEMPT_HIGH_QUEUE, 90, 'lowerPriority'],
  ] as const) {
    const r = await d.api('POST', '/v1/queues', { name, priority, preemption });
    if (r.status !== 201 && r.status !== 409) throw new Error(`POST /v1/queues ${name}: ${r.status} ${JSON.stringify(r.json)}`);
  }

  await emptyTheFleet(d);
  // Fill every GPU node with one attempt holding all its GPUs: the fleet is full, and an 8-GPU job must preempt one.
  const sizes = (await d.db.query(`SELECT gpus_total AS gpus, count(*)::int AS n FROM nodes WHERE gpus_total > 0 AND NOT cordoned GROUP BY gpus_total`))
    .rows as Array<{ gpus: number; n: number }>;
  let filled = 0;
  for (const { gpus, n } of sizes.sort((a, b) => b.gpus - a.gpus)) {
    d.say(`preemption: filling ${n} nodes of ${gpus} GPUs with one low-band job each`);
    // Creates the gateway refused (a loaded machine sheds some) are sent again, a few rounds at most.
    for (let round = 0; round < 5; round++) {
      const [r] = (await d.db.query(`SELECT count(*)::int AS n FROM jobs WHERE name = $1 AND gpus = $2`, [PREEMPT_FILL_JOB_NAME, gpus])).rows;
      if (r.n >= n) break;
      await runCreatePhase(
        { baseUrl: d.gatewayUrl, token: d.token, body: job(PREEMPT_FILL_JOB_NAME, PREEMPT_LOW_QUEUE, gpus, 3_600_000, settings.stopMs) },
        { connections: Math.min(settings.fillConnections, n - r.n), durationS: 3600, amount: n - r.n },
      );
    }
    filled += n;
  }
  await d.until(
    'the fleet full of low-band work',
    900_000,
    async () => {
      const [r] = (await d.db.query(`SELECT count(*) FILTER (WHERE state = 'RUNNING')::int AS running FROM jobs WHERE name = $1`, [PREEMPT_FILL_JOB_NAME]))
        .rows;
      return r.running >= filled;
    },
    1000,
  );
  d.say(`preemption: ${filled} low-band attempts fill the fleet`);

  const startMs = Date.now();
  const every = Math.max(1, Math.round(1 / settings.highShare));
  const high = job(PREEMPT_HIGH_JOB_NAME, PREEMPT_HIGH_QUEUE, 8, settings.highRunMs);
  const low = job(PREEMPT_LOW_JOB_NAME, PREEMPT_LOW_QUEUE, 1, 3_600_000, settings.stopMs);
  d.say(`preemption: ${settings.rate}/s for ${settings.durationS} s, one in ${every} high-band`);
  const run = await runOpenLoop(
    { baseUrl: d.gatewayUrl, token: d.token, body: (i) => (i % every === every - 1 ? high : low) },
    {
      rate: settings.rate,
      durationS: settings.durationS,
      maxSockets: settings.maxSockets,
    },
  );
  const highIds = run.samples.filter((s) => s.jobId && s.index % every === every - 1).map((s) => s.jobId!);
  const lowCount = run.samples.filter((s) => s.jobId).length - highIds.length;
  await d
    .until('every high-band job RUN (or the settle time)', settings.settleS * 1000, async () => highIds.every((id) => d.watch.dispatchedAt(id) !== null), 1000)
    .catch((e) => d.say(`${(e as Error).message}; going on`));

  const created = new Map(
    ((await d.db.query(`SELECT id::text, created_at FROM jobs WHERE id = ANY($1::uuid[])`, [highIds])).rows as Array<{ id: string; created_at: Date }>).map(
      (r) => [r.id, r.created_at.getTime()],
    ),
  );
  const kills = (
    await d.db.query(
      `SELECT substring(reason from 'for job ([0-9a-f-]{36})') AS preemptor, min(at) AS first, count(*)::int AS victims
     FROM job_events WHERE type = 'PREEMPTION_REQUESTED' AND at >= $1 GROUP BY 1`,
      [new Date(startMs)],
    )
  ).rows as Array<{ preemptor: string; first: Date; victims: number }>;
  const killAt = new Map(kills.map((k) => [k.preemptor, k.first.getTime()]));
  const toKill: number[] = [];
  const toRun: number[] = [];
  const killToRun: number[] = [];
  let startedWithout = 0;
  let notStarted = 0;
  for (const id of highIds) {
    const submitted = created.get(id);
    const kill = killAt.get(id);
    const ran = d.watch.dispatchedAt(id);
    if (submitted === undefined) continue;
    if (ran === null) notStarted++;
    else toRun.push(ran - submitted);
    if (kill === undefined) {
      if (ran !== null) startedWithout++;
      continue;
    }
    toKill.push(kill - submitted);
    if (ran !== null) killToRun.push(ran - kill);
  }
  return {
    settings,
    filled,
    submitted: { high: highIds.length, low: lowCount, failed: run.samples.filter((s) => !s.jobId).length },
    high: { preempted: toKill.length, startedWithout, notStarted },
    victims: kills.filter((k) => highIds.includes(k.preemptor)).reduce((n, k) => n + k.victims, 0),
    submitToKillMs: percentiles(toKill),
    killToRunMs: percentiles(killToRun),
    submitToRunMs: percentiles(toRun),
  };
}

export function preemptionLines(r: PreemptionResult): string[] {
  const ms = (p: Percentiles | null) => (p ? `p50 ${Math.round(p.p50)} ms, p99 ${Math.round(p.p99)} ms, max ${Math.round(p.max)} ms` : '-');
  return [
    `preemption: fleet filled by ${r.filled} low-band attempts; ${r.settings.rate}/s for ${r.settings.durationS} s, ${r.settings.highShare * 100}% high-band ` +
      `(${r.submitted.high} high, ${r.submitted.low} low, ${r.submitted.failed} failed); grace ${r.settings.graceMs} ms, victims stop in ${r.settings.stopMs} ms`,
    `  high-band jobs: ${r.high.preempted} preempted (${r.victims} victims), ${r.high.startedWithout} started without, ${r.high.notStarted} not started`,
    `  submit -> KILL: ${ms(r.submitToKillMs)}`,
    `  KILL -> RUN:    ${ms(r.killToRunMs)}`,
    `  submit -> RUN:  ${ms(r.submitToRunMs)}`,
  ];
}
