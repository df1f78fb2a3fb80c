import fc from 'fast-check';
import { fitsNow } from '../resources/resources';
import { RankRun } from './backfill-window';
import { PendingJob, PlacementNode, planPlacements } from './placement';

const NOW = 10_000_000;

interface World {
  nodes: PlacementNode[];
  runs: Map<string, RankRun[]>;
  jobs: PendingJob[];
}

const rank = (limits: boolean) =>
  fc.record({
    gpus: fc.integer({ min: 1, max: 4 }),
    startedAgoS: fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }),
    maxRuntimeSeconds: limits ? fc.integer({ min: 1, max: 1000 }) : fc.option(fc.integer({ min: 1, max: 1000 }), { nil: null }),
  });

/** A small fleet with running ranks, and jobs in policy order, some with maxRuntimeSeconds. */
const world = (limits: boolean) =>
  fc
    .record({
      nodes: fc.array(fc.record({ rack: fc.constantFrom('r1', 'r2'), ranks: fc.array(rank(limits), { maxLength: 4 }) }), { minLength: 1, maxLength: 5 }),
      jobs: fc.array(
        fc.record({
          gpus: fc.integer({ min: 1, max: 8 }),
          nodes: fc.integer({ min: 1, max: 2 }),
          maxRuntimeSeconds: fc.option(fc.integer({ min: 1, max: 1200 }), { nil: null }),
        }),
        { minLength: 1, maxLength: 10 },
      ),
    })
    .map(({ nodes, jobs }): World => {
      const runs = new Map<string, RankRun[]>();
      const placed = nodes.map((spec, i) => {
        const id = `n${i}`;
        const kept: RankRun[] = [];
        let used = 0;
        for (const r of spec.ranks) {
          if (used + r.gpus > 8) continue;
          used += r.gpus;
          kept.push({
            gpus: r.gpus,
            cpuCores: 1,
            memoryMiB: 1024,
            startedAtMs: r.startedAgoS === null ? null : NOW - r.startedAgoS * 1000,
            maxRuntimeSeconds: r.maxRuntimeSeconds,
          });
        }
        runs.set(id, kept);
        const node: PlacementNode = {
          id,
          rack: spec.rack,
          health: 'HEALTHY',
          cordoned: false,
          version: 1,
          gpuModel: 'H100',
          gpusTotal: 8,
          gpusAllocated: used,
          cpuCores: 64,
          cpuAllocated: kept.length,
          memoryMiB: 65536,
          memoryAllocated: kept.length * 1024,
        };
        return node;
      });
      return {
        nodes: placed,
        runs,
        jobs: jobs.map((j, i) => ({
          id: `j${i}`,
          nodes: j.nodes,
          band: 0,
          maxRuntimeSeconds: j.maxRuntimeSeconds,
          resources: { gpus: j.gpus, gpuModel: null, cpuCores: 1, memoryMiB: 1024 },
        })),
      };
    });

const endOf = (startMs: number | null, max: number | null) => (max === null ? Number.POSITIVE_INFINITY : Math.max(NOW, (startMs ?? NOW) + max * 1000));

describe('runtime-aware backfill (property)', () => {
  it("a job placed on reserved nodes after the reservation ends by the head's estimated start, and then the head fits", () => {
    fc.assert(
      fc.property(world(false), ({ nodes, runs, jobs }) => {
        const plan = planPlacements(jobs, nodes, { backfill: { nowMs: NOW, runs } });
        const r = plan.reservation;
        if (r === null) return;
        const reserved = new Set(r.nodeIds);
        const headAt = jobs.findIndex((j) => j.id === r.jobId);
        const order = new Map(jobs.map((j, i) => [j.id, i]));
        const byId = new Map(jobs.map((j) => [j.id, j]));
        const onReserved = plan.placements.filter((p) => order.get(p.jobId)! > headAt && p.nodeIds.some((id) => reserved.has(id)));
        if (r.estimatedStartMs === null) {
          // Unknown: strict.
          expect(onReserved).toEqual([]);
          return;
        }
        const start = r.estimatedStartMs!;
        for (const p of onReserved) expect(NOW + byId.get(p.jobId)!.maxRuntimeSeconds! * 1000).toBeLessThanOrEqual(start);
        // At the estimate, what has ended (read ranks and the plan's own placements, each at its limit) leaves room for the head on every reserved node.
        const head = byId.get(r.jobId)!;
        for (const id of r.nodeIds) {
          let n = plan.after.get(id) ?? nodes.find((x) => x.id === id)!;
          const ends = [
            ...runs.get(id)!.map((x) => ({ gpus: x.gpus, at: endOf(x.startedAtMs, x.maxRuntimeSeconds) })),
            ...plan.placements
              .filter((p) => p.nodeIds.includes(id))
              .map((p) => ({ gpus: byId.get(p.jobId)!.resources.gpus, at: endOf(null, byId.get(p.jobId)!.maxRuntimeSeconds ?? null) })),
          ];
          for (const e of ends)
            if (e.at <= start)
              n = { ...n, gpusAllocated: n.gpusAllocated - e.gpus, cpuAllocated: n.cpuAllocated - 1, memoryAllocated: n.memoryAllocated - 1024 };
          expect(fitsNow(n, head.resources)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('with every runtime known the estimate is known whenever the head could ever fit', () => {
    fc.assert(
      fc.property(world(true), ({ nodes, runs, jobs }) => {
        const known = jobs.map((j) => ({ ...j, maxRuntimeSeconds: j.maxRuntimeSeconds ?? 1 }));
        const plan = planPlacements(known, nodes, { backfill: { nowMs: NOW, runs } });
        if (plan.reservation) expect(plan.reservation.estimatedStartMs).not.toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it('the next cycle, the backfilled work running and the head first again, estimates the head no later', () => {
    fc.assert(
      fc.property(world(true), ({ nodes, runs, jobs }) => {
        const first = planPlacements(jobs, nodes, { backfill: { nowMs: NOW, runs } });
        const r = first.reservation;
        if (r === null || r.estimatedStartMs === null || r.estimatedStartMs === undefined) return;
        const byId = new Map(jobs.map((j) => [j.id, j]));
        // What the first plan placed now runs, from now, each rank until its limit.
        const running = new Map([...runs].map(([id, ranks]) => [id, [...ranks]]));
        for (const p of first.placements) {
          const j = byId.get(p.jobId)!;
          for (const id of p.nodeIds)
            running.get(id)!.push({ gpus: j.resources.gpus, cpuCores: 1, memoryMiB: 1024, startedAtMs: NOW, maxRuntimeSeconds: j.maxRuntimeSeconds ?? null });
        }
        const now = nodes.map((n) => first.after.get(n.id) ?? n);
        const placed = new Set(first.placements.map((p) => p.jobId));
        const waiting = [byId.get(r.jobId)!, ...jobs.filter((j) => j.id !== r.jobId && !placed.has(j.id))];
        const second = planPlacements(waiting, now, { backfill: { nowMs: NOW, runs: running } });
        if (second.placements.some((p) => p.jobId === r.jobId)) return;
        expect(second.reservation?.jobId).toBe(r.jobId);
        expect(second.reservation!.estimatedStartMs).not.toBeNull();
        expect(second.reservation!.estimatedStartMs!).toBeLessThanOrEqual(r.estimatedStartMs);
      }),
      { numRuns: 500 },
    );
  });

  it('places exactly as strict when neither a job nor a running rank has maxRuntimeSeconds', () => {
    fc.assert(
      fc.property(world(false), ({ nodes, runs, jobs }) => {
        const unlimited = jobs.map((j) => ({ ...j, maxRuntimeSeconds: null }));
        const unknownEnds = new Map([...runs].map(([id, ranks]) => [id, ranks.map((x) => ({ ...x, maxRuntimeSeconds: null }))]));
        const runtime = planPlacements(unlimited, nodes, { backfill: { nowMs: NOW, runs: unknownEnds } });
        const strict = planPlacements(unlimited, nodes);
        expect(runtime.placements).toEqual(strict.placements);
        expect(runtime.reservation && { ...runtime.reservation, estimatedStartMs: undefined }).toEqual(
          strict.reservation && { ...strict.reservation, estimatedStartMs: undefined },
        );
        expect(runtime.pending.map((p) => p.jobId)).toEqual(strict.pending.map((p) => p.jobId));
      }),
      { numRuns: 300 },
    );
  });
});
