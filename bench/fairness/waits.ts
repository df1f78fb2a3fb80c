/**
 * Wait per team: submission to first placement. A job still waiting at the cut-off counts with the
 * wait it had by then (a lower bound), so a policy that starves a team cannot look better by
 * leaving its jobs out; how many are censored this way is reported beside the percentiles.
 */
import { percentile } from '../api/stats';
import { JobWait } from './timeline';

export interface TeamWaits {
  team: string;
  jobs: number;
  /** Still waiting at the cut-off. */
  censored: number;
  p50S: number;
  p99S: number;
  meanS: number;
}

export function waitsByTeam(waits: readonly JobWait[], cutoffMs: number): TeamWaits[] {
  const byTeam = new Map<string, { waits: number[]; censored: number }>();
  for (const w of waits) {
    if (w.submitMs >= cutoffMs) continue;
    const open = w.startMs === null || w.startMs > cutoffMs;
    const t = byTeam.get(w.team) ?? { waits: [], censored: 0 };
    byTeam.set(w.team, t);
    t.waits.push(Math.max(0, (open ? cutoffMs : w.startMs!) - w.submitMs) / 1000);
    if (open) t.censored++;
  }
  return [...byTeam].map(([team, t]) => {
    const s = t.waits.sort((a, b) => a - b);
    return { team, jobs: s.length, censored: t.censored, p50S: percentile(s, 50), p99S: percentile(s, 99), meanS: s.reduce((a, b) => a + b, 0) / s.length };
  });
}
