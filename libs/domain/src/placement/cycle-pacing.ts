import { LoadGap, loadGapMs } from '../pacing/load-gap';

/**
 * When the scheduler runs its next cycle. A cycle costs the same whatever woke it (it reads every
 * queue's head), so how often it runs is a decision, not a consequence of how many wake-ups arrive:
 * - freed capacity (a job ended, a node was uncordoned) is worth a cycle at once;
 * - new work is too, unless the last cycle placed nothing of what it looked at: then the queues are
 *   blocked on capacity, a new job rarely changes that, and cycling once per create would spend the
 *   machine on re-reading a blocked queue (hundreds of creates a second). New work then waits until
 *   `blockedGapMs` after the last cycle began, twice that after two blocked cycles in a row, and so
 *   on up to the tick: a queue that stays blocked is re-read about once a second, not ten times;
 * - with no wake-up, the periodic tick (GANTRY_SCHEDULER_INTERVAL_MS) after the last cycle ended;
 * - no cycle starts sooner after the last one began than `loadGap` for what that one placed
 *   (loadGapMs), unless capacity was freed while jobs the last cycle looked at still wait: a cycle
 *   after a lone placement is not held up, and under a steady stream of creates each cycle takes
 *   up to the cap's worth of them, not the few that arrived while the last one ran. Jobs waiting
 *   for capacity are not made to wait longer for it.
 */
export type WakeKind = 'new-work' | 'capacity';

export interface CyclePacingInput {
  /** The strongest wake-up since the last cycle began, or null. */
  pending: WakeKind | null;
  /** The last cycle looked at queued jobs and placed none of them (and lost no race). */
  blocked: boolean;
  /** How many cycles in a row were blocked, the last one included (1 when absent). */
  blockedCycles?: number;
  lastCycleStartedMs: number;
  lastCycleEndedMs: number;
  nowMs: number;
  intervalMs: number;
  blockedGapMs: number;
  /** Jobs the last cycle placed, and the gap that buys the next cycle (absent: no such gap). */
  lastPlaced?: number;
  loadGap?: LoadGap;
  /** The last cycle left jobs it looked at unplaced (or more queued behind them, or lost a race). */
  leftWaiting?: boolean;
}

/** How long to wait before the next cycle, ms (0: at once); a later, stronger wake-up is decided again. */
export function nextCycleDelayMs(p: CyclePacingInput): number {
  const tick = p.lastCycleEndedMs + p.intervalMs;
  let at = tick;
  if (p.pending === 'capacity') at = p.nowMs;
  else if (p.pending === 'new-work') {
    const gap = p.blockedGapMs * 2 ** Math.min(30, Math.max(0, (p.blockedCycles ?? 1) - 1));
    at = p.blocked ? Math.min(tick, p.lastCycleStartedMs + gap) : p.nowMs;
  }
  const waitedFor = p.pending === 'capacity' && p.leftWaiting === true;
  if (p.loadGap && !waitedFor) at = Math.max(at, p.lastCycleStartedMs + loadGapMs(p.lastPlaced ?? 0, p.loadGap));
  return Math.max(0, at - p.nowMs);
}
