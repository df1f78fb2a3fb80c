import { FairShareInput, FairShareStanding, NO_STANDING, addStandings, fairShareKey, ownerWeight } from './fair-share';

/** What the picker needs of a job: its queue, owner and GPUs (a gang counts every node). */
export interface FairShareJob {
  queue: string;
  /** Jobs without one share a single anonymous owner. */
  owner?: string;
  resources: { gpus: number };
  nodes: number;
}

/** What the picker needs of a queue. */
export interface FairShareQueue {
  name: string;
  weight: number;
  ownerWeights?: Readonly<Record<string, number>> | null;
}

const ANONYMOUS = '';

/**
 * The decayed fair-share order inside one cycle (ADR 0038): which queue of a band goes next
 * (`compareQueues`), which of its jobs (`take`: the oldest of the owner with the lowest key), and
 * the advance after a pick is ordered (`charge`: its GPUs count as held from then on, so the next
 * pick sees it). Built once per cycle over the jobs each queue may offer (its lookahead).
 */
export class FairSharePicker<J extends FairShareJob> {
  private readonly queueStanding = new Map<string, FairShareStanding>();
  private readonly ownerStanding = new Map<string, Map<string, FairShareStanding>>();
  /** Per queue, per owner, its jobs not taken yet, oldest first (a cursor into each list). */
  private readonly waiting = new Map<string, Map<string, { jobs: J[]; next: number }>>();
  private readonly queues: Map<string, FairShareQueue>;

  constructor(
    private readonly input: FairShareInput,
    queues: readonly FairShareQueue[],
    jobsByQueue: ReadonlyMap<string, readonly J[]>,
    lookahead: number,
  ) {
    this.queues = new Map(queues.map((q) => [q.name, q]));
    for (const [queue, owners] of input.usage) {
      let total = NO_STANDING;
      const mine = new Map<string, FairShareStanding>();
      for (const [owner, s] of owners) {
        mine.set(owner, s);
        total = addStandings(total, s);
      }
      this.ownerStanding.set(queue, mine);
      this.queueStanding.set(queue, total);
    }
    for (const [queue, jobs] of jobsByQueue) {
      const byOwner = new Map<string, { jobs: J[]; next: number }>();
      for (const j of jobs.slice(0, lookahead)) {
        const o = j.owner ?? ANONYMOUS;
        const list = byOwner.get(o) ?? { jobs: [], next: 0 };
        list.jobs.push(j);
        byOwner.set(o, list);
      }
      this.waiting.set(queue, byOwner);
    }
  }

  /** The queue's key now: lower goes first. */
  queueKey(queue: string): number {
    return fairShareKey(this.queueStanding.get(queue) ?? NO_STANDING, this.queues.get(queue)?.weight ?? 1, this.input.horizonSeconds);
  }

  ownerKey(queue: string, owner: string): number {
    const s = this.ownerStanding.get(queue)?.get(owner) ?? NO_STANDING;
    return fairShareKey(s, ownerWeight(this.queues.get(queue)?.ownerWeights, owner), this.input.horizonSeconds);
  }

  /** Negative when `a` goes before `b`; 0 when fair share does not tell them apart. */
  compareQueues(a: string, b: string): number {
    return this.queueKey(a) - this.queueKey(b);
  }

  /** The queue's next job: the oldest of its owner with the lowest key (then the owner's name), or undefined when none is left. */
  take(queue: string): J | undefined {
    let best: { owner: string; key: number; list: { jobs: J[]; next: number } } | undefined;
    for (const [owner, list] of this.waiting.get(queue) ?? []) {
      if (list.next >= list.jobs.length) continue;
      const key = this.ownerKey(queue, owner);
      if (best === undefined || key < best.key || (key === best.key && owner < best.owner)) best = { owner, key, list };
    }
    if (!best) return undefined;
    return best.list.jobs[best.list.next++];
  }

  /** The job was ordered as if placed: its queue and owner hold its GPUs from now on. */
  charge(job: J): void {
    const held: FairShareStanding = { usage: 0, gpus: job.resources.gpus * job.nodes };
    const owner = job.owner ?? ANONYMOUS;
    this.queueStanding.set(job.queue, addStandings(this.queueStanding.get(job.queue) ?? NO_STANDING, held));
    const owners = this.ownerStanding.get(job.queue) ?? new Map<string, FairShareStanding>();
    owners.set(owner, addStandings(owners.get(owner) ?? NO_STANDING, held));
    this.ownerStanding.set(job.queue, owners);
  }
}
