/**
 * GPU utilisation while work waits: over the moments when at least one job of any team was waiting
 * to be placed, the GPUs held divided by the fleet's GPUs. Idle GPUs while nothing waits are no
 * loss; idle GPUs while something waits are what a policy (a strict reservation, a gang that does
 * not fit yet) costs. The caller passes the waits that count (timeline.ts, waitsPastGrace).
 */
import { Holding, JobWait, clip } from './timeline';

export interface Utilisation {
  /** Seconds of [from, to) during which at least one job waited. */
  waitingS: number;
  /** Held GPU-seconds over fleet GPU-seconds during those seconds (NaN when nothing waited). */
  whileWaiting: number;
  /** Held GPU-seconds over fleet GPU-seconds over the whole of [from, to). */
  overall: number;
  /** Fleet GPU-seconds left idle while work waited. */
  idleGpuSecondsWhileWaiting: number;
}

export function utilisation(holdings: readonly Holding[], waits: readonly JobWait[], fleetGpus: number, fromMs: number, toMs: number): Utilisation {
  // A sweep over start/end events: GPUs held and jobs waiting are step functions of time.
  const events: Array<[number, number, number]> = []; // [at, Δgpus held, Δjobs waiting]
  for (const h of holdings) {
    const c = clip(h.startMs, h.endMs, fromMs, toMs);
    if (c) events.push([c[0], h.gpus, 0], [c[1], -h.gpus, 0]);
  }
  for (const w of waits) {
    const c = clip(w.submitMs, w.startMs, fromMs, toMs);
    if (c) events.push([c[0], 0, 1], [c[1], 0, -1]);
  }
  // Every interval is clipped to [from, to) and closes by `to`, so nothing is held or waits after the last event.
  events.sort((a, b) => a[0] - b[0]);
  let held = 0;
  let waiting = 0;
  let at = fromMs;
  let heldAll = 0;
  let heldWaiting = 0;
  let waitingMs = 0;
  for (const [t, dg, dw] of events) {
    const dt = t - at;
    heldAll += held * dt;
    if (waiting > 0) {
      heldWaiting += held * dt;
      waitingMs += dt;
    }
    held += dg;
    waiting += dw;
    at = t;
  }
  const whileWaiting = waitingMs > 0 ? heldWaiting / (fleetGpus * waitingMs) : NaN;
  return {
    waitingS: waitingMs / 1000,
    whileWaiting,
    overall: toMs > fromMs ? heldAll / (fleetGpus * (toMs - fromMs)) : NaN,
    idleGpuSecondsWhileWaiting: (fleetGpus * waitingMs - heldWaiting) / 1000,
  };
}
