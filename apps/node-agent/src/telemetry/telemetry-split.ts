import { NodeTelemetry } from './telemetry-source';

/**
 * When a beat carries the node's telemetry (ADR 0010). Liveness and the running set go in every
 * beat; the telemetry (most of a beat's bytes: one object per GPU) only when it says something new:
 * the node's first beat, a change of shape or health, a move of at least `delta`, or every
 * `every`-th beat regardless, so a reader is never more than `every` periods behind.
 */
export interface TelemetrySplit {
  /** Beats per full telemetry at most (1 = every beat). */
  every: number;
  /** Smallest change of a utilisation (0..1) or of memory used (share of total) worth sending at once. */
  delta: number;
}

// The epsilon keeps 0.5 - 0.4 (0.0999...) a move of 0.1.
const moved = (a: number, b: number, by: number) => Math.abs(a - b) >= by - 1e-9;

export function telemetryDue(last: NodeTelemetry | null, beatsSinceLast: number, now: NodeTelemetry, split: TelemetrySplit): boolean {
  if (last === null || beatsSinceLast + 1 >= split.every) return true;
  if (now.cpu.cores !== last.cpu.cores || now.memory.totalMiB !== last.memory.totalMiB || now.gpus.length !== last.gpus.length) return true;
  if (moved(now.cpu.utilization, last.cpu.utilization, split.delta)) return true;
  if (moved(now.memory.usedMiB, last.memory.usedMiB, split.delta * now.memory.totalMiB)) return true;
  for (let i = 0; i < now.gpus.length; i++) {
    const g = now.gpus[i];
    const p = last.gpus[i];
    if (g.healthy !== p.healthy || g.model !== p.model || g.memoryMiB !== p.memoryMiB) return true;
    if (moved(g.utilization, p.utilization, split.delta)) return true;
    if (moved(g.memoryUsedMiB, p.memoryUsedMiB, split.delta * g.memoryMiB)) return true;
  }
  return false;
}
