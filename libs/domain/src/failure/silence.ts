/**
 * Silence the control plane would have heard. A node's silence is measured against the ingestion
 * watermark (the newest beat written for any node), not against the wall clock: if ingestion stalls
 * (consumer lag, an ingester restart, Kafka trouble) the watermark stops and no node grows silent.
 * A whole fleet falling silent at once looks the same as a stall, and the safe reading is the stall.
 */
export function silenceMs(lastSeenMs: number | null, watermarkMs: number, sinceMs: number): number {
  // Never heard since the detector's information began (a Redis restart): count from that moment.
  return watermarkMs - Math.max(lastSeenMs ?? sinceMs, sinceMs);
}

/**
 * The watermark may not run ahead of the wall clock, and is only trusted while ingestion is live:
 * `null` when the newest beat is older than `stallMs` (the detector then judges nobody).
 */
export function ingestionWatermark(newestBeatMs: number | null, nowMs: number, stallMs: number): number | null {
  if (newestBeatMs === null) return null;
  if (nowMs - newestBeatMs > stallMs) return null;
  return Math.min(newestBeatMs, nowMs);
}
