/** bench:fairness's printed tables: the policies side by side, per team, and what backfill adds. */
import { fmt, table } from '../api/stats';
import { Analysis } from './analysis';
import { PolicyName } from './policies';
import { TeamSpec, describeTrace } from './trace';

export interface PolicyRun {
  policy: PolicyName;
  analysis: Analysis;
  replay: { refusals: number; lateMs: { p50: number; p99: number; max: number } };
  states: Record<string, number>;
  retries: number;
}

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : '-');
const pp = (x: number) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} pp` : '-');

export function traceTable(rows: ReturnType<typeof describeTrace>, teams: readonly TeamSpec[]): string {
  return table([
    ['team', 'weight', 'jobs', 'offered load', 'GPU-s', 'runtime p50/p90/p99/max s', 'max gang GPUs', 'limit / runtime'],
    ...teams
      .map((t) => rows.find((r) => r.team === t.name))
      .filter((r) => r !== undefined)
      .map((r) => [
        r.team,
        String(teams.find((t) => t.name === r.team)?.weight ?? '-'),
        String(r.jobs),
        pct(r.offeredLoad),
        String(r.gpuSeconds),
        `${fmt(r.runtimeS.p50, 0)}/${fmt(r.runtimeS.p90, 0)}/${fmt(r.runtimeS.p99, 0)}/${fmt(r.runtimeS.max, 0)}`,
        String(r.maxGangGpus),
        fmt(r.overestimate, 2),
      ]),
  ]);
}

export function policyTable(runs: readonly PolicyRun[], floors: { utilisation: number; tolerance: number }): string {
  return table([
    [
      'policy',
      `GPU util. while waiting (floor ${pct(floors.utilisation)})`,
      'util. overall',
      'waiting s',
      'idle GPU-s while waiting',
      'Jain mean / min',
      `windows within ${pct(floors.tolerance)}`,
      'floors met',
      'creates late p99 ms',
    ],
    ...runs.map((r) => {
      const a = r.analysis;
      const within = a.shares.reduce((s, t) => s + t.within, 0);
      const all = a.shares.reduce((s, t) => s + t.windows, 0);
      return [
        r.policy,
        pct(a.utilisation.whileWaiting),
        pct(a.utilisation.overall),
        fmt(a.utilisation.waitingS, 0),
        fmt(a.utilisation.idleGpuSecondsWhileWaiting, 0),
        `${fmt(a.jain.meanOverWindows, 3)} / ${fmt(a.jain.minOverWindows, 3)}`,
        `${within}/${all}`,
        `util ${a.floors.utilisation ? 'yes' : 'NO'}, shares ${a.floors.shares ? 'yes' : 'NO'}`,
        fmt(r.replay.lateMs.p99, 0),
      ];
    }),
  ]);
}

export function teamTable(runs: readonly PolicyRun[], teams: readonly TeamSpec[]): string {
  const rows: string[][] = [
    ['team (weight)', 'policy', 'share / entitled (mean)', 'max |dev|', 'windows within', 'wait p50 s', 'wait p99 s', 'still waiting at end'],
  ];
  for (const t of teams) {
    for (const r of runs) {
      const s = r.analysis.shares.find((x) => x.team === t.name);
      const w = r.analysis.waits.find((x) => x.team === t.name);
      rows.push([
        `${t.name} (${t.weight})`,
        r.policy,
        s ? `${pct(s.meanShare)} / ${pct(s.meanEntitlement)}` : '-',
        s ? pp(s.maxDeviation).replace('+', '') : '-',
        s ? `${s.within}/${s.windows}` : '-',
        w ? fmt(w.p50S, 1) : '-',
        w ? fmt(w.p99S, 1) : '-',
        w ? `${w.censored}/${w.jobs}` : '-',
      ]);
    }
  }
  return table(rows);
}

/** The new policy against the same with a strict reservation: what runtime-aware backfill adds. */
export function backfillTable(withBackfill: PolicyRun, strict: PolicyRun, teams: readonly TeamSpec[]): string {
  const a = withBackfill.analysis;
  const b = strict.analysis;
  const rows = [
    ['what runtime-aware backfill adds (new - new-strict)', 'value'],
    ['GPU utilisation while waiting', pp(a.utilisation.whileWaiting - b.utilisation.whileWaiting)],
    ['GPU utilisation overall', pp(a.utilisation.overall - b.utilisation.overall)],
    ['idle GPU-s while waiting', fmt(a.utilisation.idleGpuSecondsWhileWaiting - b.utilisation.idleGpuSecondsWhileWaiting, 0)],
    ...teams.map((t) => {
      const x = a.waits.find((w) => w.team === t.name);
      const y = b.waits.find((w) => w.team === t.name);
      return [`${t.name}: wait p50 / p99 s`, x && y ? `${fmt(x.p50S - y.p50S, 1)} / ${fmt(x.p99S - y.p99S, 1)}` : '-'];
    }),
  ];
  return table(rows);
}
