/**
 * Each team's share of the GPU-seconds delivered over sliding windows, beside its entitlement
 * (entitlement.ts) and Jain's index of the window (jain.ts). A window counts only once fair share
 * has had time to settle (the caller's `fromMs`, e.g. two half-lives into the trace).
 */
import { entitlements } from './entitlement';
import { jainIndex } from './jain';
import { Holding, JobWait, clip, unionMs } from './timeline';

export interface WindowOptions {
  fromMs: number;
  toMs: number;
  windowMs: number;
  stepMs: number;
  /** A team is backlogged in a window when some job of it waited for at least this share of it. */
  backlogShare: number;
}

export interface TeamWindow {
  team: string;
  gpuSeconds: number;
  /** Of the window's delivered GPU-seconds, 0..1. */
  share: number;
  entitlement: number;
  backlogged: boolean;
}

export interface ShareWindow {
  startMs: number;
  endMs: number;
  teams: TeamWindow[];
  /** Jain's index of share / entitlement over teams with an entitlement. */
  jain: number;
}

/** GPU-seconds held by a team within [fromMs, toMs). */
export function gpuSeconds(holdings: readonly Holding[], team: string, fromMs: number, toMs: number): number {
  let ms = 0;
  for (const h of holdings) {
    if (h.team !== team) continue;
    const c = clip(h.startMs, h.endMs, fromMs, toMs);
    if (c) ms += h.gpus * (c[1] - c[0]);
  }
  return ms / 1000;
}

/** One window: shares, entitlements and Jain's index; null when nothing was delivered in it. */
export function shareWindow(
  holdings: readonly Holding[],
  waits: readonly JobWait[],
  weights: ReadonlyMap<string, number>,
  startMs: number,
  endMs: number,
  backlogShare: number,
): ShareWindow | null {
  const demands = [...weights].map(([team, weight]) => ({
    team,
    weight,
    used: gpuSeconds(holdings, team, startMs, endMs),
    backlogged:
      unionMs(
        waits.filter((w) => w.team === team).map((w) => [w.submitMs, w.startMs] as const),
        startMs,
        endMs,
      ) >=
      backlogShare * (endMs - startMs),
  }));
  const total = demands.reduce((s, d) => s + d.used, 0);
  if (total <= 0) return null;
  const ent = entitlements(demands);
  const teams = demands.map((d) => ({
    team: d.team,
    gpuSeconds: d.used,
    share: d.used / total,
    entitlement: ent.get(d.team)! / total,
    backlogged: d.backlogged,
  }));
  const entitled = teams.filter((t) => t.entitlement > 0);
  return { startMs, endMs, teams, jain: jainIndex(entitled.map((t) => t.share / t.entitlement)) };
}

/** Windows of `windowMs` every `stepMs` from `fromMs` while they end by `toMs`. */
export function shareWindows(holdings: readonly Holding[], waits: readonly JobWait[], weights: ReadonlyMap<string, number>, o: WindowOptions): ShareWindow[] {
  const out: ShareWindow[] = [];
  for (let a = o.fromMs; a + o.windowMs <= o.toMs; a += o.stepMs) {
    const w = shareWindow(holdings, waits, weights, a, a + o.windowMs, o.backlogShare);
    if (w) out.push(w);
  }
  return out;
}

export interface TeamShareSummary {
  team: string;
  /** Over every window, mean share and entitlement. */
  meanShare: number;
  meanEntitlement: number;
  /** Largest |share - entitlement|, in shares (0.1 = 10 percentage points). */
  maxDeviation: number;
  meanDeviation: number;
  /** Windows where |share - entitlement| <= tolerance, of all windows. */
  within: number;
  windows: number;
}

export function summariseShares(windows: readonly ShareWindow[], tolerance: number): TeamShareSummary[] {
  const teams = [...new Set(windows.flatMap((w) => w.teams.map((t) => t.team)))];
  return teams.map((team) => {
    const rows = windows.map((w) => w.teams.find((t) => t.team === team)!).filter(Boolean);
    const dev = rows.map((r) => Math.abs(r.share - r.entitlement));
    const mean = (xs: number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : NaN);
    return {
      team,
      meanShare: mean(rows.map((r) => r.share)),
      meanEntitlement: mean(rows.map((r) => r.entitlement)),
      maxDeviation: dev.length ? Math.max(...dev) : NaN,
      meanDeviation: mean(dev),
      within: dev.filter((d) => d <= tolerance + 1e-12).length,
      windows: rows.length,
    };
  });
}
