/** One policy's figures from its run's timeline: utilisation, shares against entitlement, Jain's index, waits. */
import { FairnessConfig } from './config';
import { RunTimeline } from './readback';
import { waitsPastGrace } from './timeline';
import { Utilisation, utilisation } from './utilisation';
import { TeamWaits, waitsByTeam } from './waits';
import { ShareWindow, TeamShareSummary, shareWindows, summariseShares } from './window-shares';

/** The run's start, and the settings of its config (config.ts) that the figures use. */
export type AnalysisOptions = { t0Ms: number } & Pick<
  FairnessConfig,
  'traceS' | 'settleS' | 'windowS' | 'stepS' | 'backlogShare' | 'shareTolerance' | 'utilisationFloor' | 'waitGraceS'
>;

export interface Analysis {
  utilisation: Utilisation;
  shares: TeamShareSummary[];
  windows: ShareWindow[];
  jain: { meanOverWindows: number; minOverWindows: number };
  waits: TeamWaits[];
  floors: { utilisation: boolean; shares: boolean };
}

export function analyse(t: RunTimeline, weights: ReadonlyMap<string, number>, o: AnalysisOptions): Analysis {
  const endMs = o.t0Ms + o.traceS * 1000;
  const waiting = waitsPastGrace(t.waits, o.waitGraceS * 1000);
  const u = utilisation(t.holdings, waiting, t.fleetGpus, o.t0Ms, endMs);
  const windows = shareWindows(t.holdings, waiting, weights, {
    fromMs: o.t0Ms + o.settleS * 1000,
    toMs: endMs,
    windowMs: o.windowS * 1000,
    stepMs: o.stepS * 1000,
    backlogShare: o.backlogShare,
  });
  const shares = summariseShares(windows, o.shareTolerance);
  const jains = windows.map((w) => w.jain).filter(Number.isFinite);
  return {
    utilisation: u,
    shares,
    windows,
    jain: { meanOverWindows: jains.length ? jains.reduce((s, x) => s + x, 0) / jains.length : NaN, minOverWindows: jains.length ? Math.min(...jains) : NaN },
    waits: waitsByTeam(t.waits, endMs),
    floors: {
      utilisation: u.whileWaiting >= o.utilisationFloor,
      shares: windows.length > 0 && shares.every((s) => s.within === s.windows),
    },
  };
}
