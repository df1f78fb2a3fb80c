import { setTimeout as delay } from 'node:timers/promises';
import { PagedReadOptions } from '@gantry/persistence';

/**
 * Paging for the snapshots' periodic full reads, which share the event loop with the cycles: after
 * each page, a pause of (1 / share - 1) times what the page took, at most `maxPauseMs`. A page's time
 * includes waiting for the event loop, so the busier the cycles, the slower the read. Unpaced, the
 * two reads (every node row and score, parsed and collected) took the scheduler's thread whole for
 * seconds and every placement meanwhile waited (ADR 0012, bench:dispatch). A backstop read may take
 * a few seconds longer; a placement may not.
 */
export function pacedPaging(share: number, maxPauseMs: number): PagedReadOptions {
  if (!(share > 0 && share <= 1)) throw new Error(`pacedPaging: share must be in (0, 1], got ${share}`);
  return { betweenPages: (pageMs) => delay(Math.min(maxPauseMs, pageMs * (1 / share - 1))) };
}
