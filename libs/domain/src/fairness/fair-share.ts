/**
 * Decayed fair share (contract 5.4, ADR 0038): within a priority band, queues (and inside a queue,
 * owners) are served in order of their fair-share key, lowest first:
 *
 *   key = (decayed usage + GPUs held now x horizon) / weight
 *
 * Decayed usage (usage-decay.ts) is in GPU-seconds and moves only with time, not when a job is
 * placed, so alone it would give every pick of a cycle to the lowest queue. The second term charges
 * what is held now (placements made earlier in the cycle included) as the GPU-seconds it would add
 * over the horizon: picks of one cycle interleave by weight among queues of similar usage, while a
 * queue far behind in usage is still served first. In steady state usage = GPUs x halfLife / ln 2,
 * so both terms are proportional to GPUs held, and equal keys mean GPUs in proportion to weight.
 */

/** The horizon as a fraction of the half-life: what is held now weighs ~9 % of steady-state usage. */
export const FAIR_SHARE_HORIZON_OF_HALF_LIFE = 1 / 8;

/** Seconds of use charged per GPU held now (see the module comment). */
export function fairShareHorizonSeconds(halfLifeSeconds: number): number {
  return halfLifeSeconds * FAIR_SHARE_HORIZON_OF_HALF_LIFE;
}

/** One queue's or owner's standing: decayed GPU-seconds used up to now, and GPUs held now. */
export interface FairShareStanding {
  usage: number;
  gpus: number;
}

export const NO_STANDING: FairShareStanding = { usage: 0, gpus: 0 };

/** The ordering key: lower is served first. A weight of 0 or less counts as tiny (served last), never a division by zero. */
export function fairShareKey(s: FairShareStanding, weight: number, horizonSeconds: number): number {
  return (s.usage + s.gpus * horizonSeconds) / Math.max(weight, 1e-9);
}

/** Sum of standings (a queue's is the sum of its owners'). */
export function addStandings(a: FairShareStanding, b: FairShareStanding): FairShareStanding {
  return { usage: a.usage + b.usage, gpus: a.gpus + b.gpus };
}

/**
 * What the scheduler orders a band by: per queue, per owner, the standing at the cycle's start, and
 * the horizon. Queues or owners absent have used nothing and hold nothing.
 */
export interface FairShareInput {
  horizonSeconds: number;
  usage: ReadonlyMap<string, ReadonlyMap<string, FairShareStanding>>;
}

/** A queue's standing: the sum of its owners'. */
export function queueStanding(input: FairShareInput, queue: string): FairShareStanding {
  let s = NO_STANDING;
  for (const o of input.usage.get(queue)?.values() ?? []) s = addStandings(s, o);
  return s;
}

/** An owner's weight inside its queue: 1 unless the queue's `ownerWeights` says otherwise. */
export function ownerWeight(ownerWeights: Readonly<Record<string, number>> | null | undefined, owner: string): number {
  // Own properties only: an owner may be called `constructor`.
  const w = ownerWeights && Object.prototype.hasOwnProperty.call(ownerWeights, owner) ? ownerWeights[owner] : undefined;
  return typeof w === 'number' && Number.isFinite(w) ? w : 1;
}

/**
 * The figures GET /v1/queues/{name} shows for a queue, against the other queues of its band:
 * - share: its weight over the sum of the weights of the band's queues with work (queued or
 *   holding GPUs), itself counted even when idle;
 * - usage: its decayed GPU-seconds as a fraction of the band's (0 when the band used nothing);
 * - factor: Slurm's classic fair-share factor 2^(-usage/share): 1 unused, 0.5 used exactly its
 *   share, towards 0 the further past it. The scheduler serves lower usage/share first (plus what
 *   is held now, fairShareKey), so a higher factor means sooner.
 */
export interface FairShareView {
  share: number;
  usage: number;
  factor: number;
}

export interface BandQueue {
  name: string;
  weight: number;
  /** Decayed GPU-seconds, decayed to now. */
  usage: number;
  /** Whether it has queued jobs or holds GPUs. */
  active: boolean;
}

export function fairShareView(queue: string, band: readonly BandQueue[]): FairShareView {
  const me = band.find((q) => q.name === queue);
  if (!me) return { share: 0, usage: 0, factor: 1 };
  const counted = band.filter((q) => q.active || q.name === queue);
  const weights = counted.reduce((sum, q) => sum + Math.max(q.weight, 0), 0);
  const used = band.reduce((sum, q) => sum + Math.max(q.usage, 0), 0);
  const share = weights > 0 ? Math.max(me.weight, 0) / weights : 0;
  const usage = used > 0 ? Math.max(me.usage, 0) / used : 0;
  const factor = share > 0 ? Math.pow(2, -usage / share) : usage > 0 ? 0 : 1;
  return { share, usage, factor };
}

/** Running ranks' decayed GPU-seconds so far, from two sums over them (see runningUsage in persistence). */
export function runningDecayedGpuSeconds(gpus: number, weightedGpus: number, halfLifeSeconds: number): number {
  // Each rank contributes gpus * hl / ln2 * (1 - 2^(-age/hl)) (decayedGpuSeconds with end = now);
  // summed, that is hl / ln2 * (sum gpus - sum gpus * 2^(-age/hl)).
  return Math.max(0, ((gpus - weightedGpus) * halfLifeSeconds) / Math.LN2);
}
