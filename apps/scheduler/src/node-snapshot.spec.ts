import fc from 'fast-check';
import { FitIndex, GangCandidates, PlacementNode, schedulableCapacity } from '@gantry/domain';
import { Sql } from '@gantry/persistence';
import { NodeSnapshot } from './node-snapshot';

const t = { suspectMs: 15_000, deadMs: 40_000 };

function row(id: string, over: Record<string, unknown> = {}) {
  return {
    id,
    zone: 'z',
    rack: 'r',
    gpu_model: 'H100',
    gpus_total: 8,
    cpu_cores: 64,
    memory_mib: '524288',
    gpus_allocated: 0,
    cpu_allocated: 0,
    memory_allocated: '0',
    cordoned: false,
    version: '1',
    first_seen_at: new Date(0),
    updated_at: new Date(0),
    changed_xid_text: '1',
    ...over,
  };
}

/** A row of the periodic check (loadNodeWriters): a node and the transaction that last wrote it. */
const writer = (id: string, xid: string) => ({ id, changed_xid_text: xid });

/**
 * A fake Sql answering each call with the rows given for it, in call order, and recording what each
 * call asked (`since`): a change read's horizon, null for a page of every row, 'writers' for a page
 * of the periodic check, 'byId:<ids>' for rows read again by id. Answers shorter than a page end a
 * paged read. `before` runs first in each call (numbered from 1): it may wait, or throw.
 */
function fakeSql(answers: Array<Array<Record<string, unknown>>>, before: (call: number) => Promise<void> | void = () => undefined) {
  const since: unknown[] = [];
  let call = 0;
  const sql: Sql = {
    async rows<T>(query: string | { text: string }, params: unknown[] = []) {
      const text = typeof query === 'string' ? query : query.text;
      if (Array.isArray(params[0])) since.push(`byId:${(params[0] as string[]).join(',')}`);
      else if (params.length === 1) since.push(params[0]);
      else since.push(/SELECT id, changed_xid FROM nodes/.test(text) ? 'writers' : null);
      const n = ++call;
      await before(n);
      const rows = answers[n - 1] ?? [];
      const horizon = String(100 + n);
      return (rows.length ? rows.map((r) => ({ horizon, ...r })) : [{ horizon, id: null }]) as T[];
    },
    afterCommit: (fn) => fn(),
  };
  return { sql, since };
}

function liveness(heard: Record<string, number>) {
  let changes: Set<string> | 'all' = 'all';
  return {
    heard,
    hear(id: string, at: number) {
      heard[id] = at;
      if (changes !== 'all') changes.add(id);
    },
    lastHeard: (id: string) => heard[id] ?? null,
    takeChanges() {
      const c = changes;
      changes = new Set();
      return c;
    },
  };
}

describe('NodeSnapshot', () => {
  it('drops a removed node from the fleet and its fit index, and takes it back when it registers again', async () => {
    const { sql } = fakeSql([[row('a'), row('b')], [{ id: null, removed: ['b', 'never-known'] }], [{ ...row('b', { version: '1' }), removed: ['b'] }]]);
    const snap = new NodeSnapshot(60_000);
    const live = liveness({ a: 0, b: 0 });
    await snap.refresh(sql, 0);
    expect(snap.placementNodes(live, 0, t).map((n) => n.id)).toEqual(['a', 'b']);
    await snap.refresh(sql, 1_000);
    expect(snap.placementNodes(live, 1_000, t).map((n) => n.id)).toEqual(['a']);
    expect(
      snap
        .planIndexes()
        .index.fitting({ gpus: 0, gpuModel: null, cpuCores: 0, memoryMiB: 0 }, new Set())
        .map((n) => n.id),
    ).toEqual(['a']);
    expect(snap.version('b')).toBeUndefined();
    // Removed and registered again since the last read: the row wins (loadNodesChangedSince filters the tombstone).
    await snap.refresh(sql, 2_000);
    expect(
      snap
        .placementNodes(live, 2_000, t)
        .map((n) => n.id)
        .sort(),
    ).toEqual(['a', 'b']);
  });

  it("reads every row first, then only changes since the horizon, and checks every node's last writer when the period is up", async () => {
    const { sql, since } = fakeSql([[row('a'), row('b')], [row('b', { gpus_allocated: 2, version: '2', changed_xid_text: '5' })], [writer('a', '1')], [], []]);
    const snap = new NodeSnapshot(60_000);
    await snap.refresh(sql, 0);
    await snap.refresh(sql, 1_000);
    const nodes = snap.placementNodes(liveness({ a: 0, b: 0 }), 1_000, t);
    expect(nodes.map((n) => [n.id, n.gpusAllocated, n.version])).toEqual([
      ['a', 0, 1],
      ['b', 2, 2],
    ]);
    expect(snap.version('b')).toBe(2);
    await snap.refresh(sql, 61_000); // the check starts beside the cycle, which reads changes meanwhile
    expect(snap.placementNodes(liveness({ a: 61_000, b: 61_000 }), 61_000, t).map((n) => n.id)).toEqual(['a', 'b']);
    await snap.refresh(sql, 62_000); // taken in (nothing to read again), then the changes since its horizon
    expect(since).toEqual([null, '101', 'writers', '102', '103']);
    // b is missing from the check and was written before it began: removed behind the feed's back.
    expect(snap.placementNodes(liveness({ a: 62_000 }), 62_000, t).map((n) => n.id)).toEqual(['a']);
  });

  it('does not hold a refresh for the periodic check, and takes it in once it has ended', async () => {
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => (release = r));
    // The second call is the periodic check: it takes as long as the test says.
    const { sql, since } = fakeSql([[row('a'), row('b')], [writer('a', '1')]], (n) => (n === 2 ? slow : undefined));
    const snap = new NodeSnapshot(60_000);
    const heard = liveness({ a: 0, b: 0 });
    await snap.refresh(sql, 0);
    await snap.refresh(sql, 60_000); // due: started, not waited for
    await snap.refresh(sql, 61_000); // still under way: changes only, no second check
    expect(since).toEqual([null, 'writers', '101', '103']);
    expect(snap.placementNodes(heard, 61_000, t).map((n) => n.id)).toEqual(['a', 'b']);
    release();
    await new Promise((r) => setImmediate(r)); // every promise the read chained has settled by the next turn
    await snap.refresh(sql, 62_000);
    expect(since.slice(4)).toEqual(['102']);
    expect(snap.placementNodes(heard, 62_000, t).map((n) => n.id)).toEqual(['a']); // b was removed: the check says so
  });

  it('reads again only the nodes whose last writer the check finds different, paced as it is told', async () => {
    const pauses: number[] = [];
    const { sql, since } = fakeSql([
      [row('a'), row('b'), row('c'), row('d')], // the first read
      [writer('a', '1')], // the check's first page (of one row)...
      [row('d', { cordoned: true, version: '2', changed_xid_text: '200' })], // ...beside the changes read at once: d, written after the check began
      [writer('b', '7')], // the check's next pages: b was written by a transaction the snapshot never saw
      [],
      [row('b', { cordoned: true, version: '2', changed_xid_text: '7' })], // b read again
      [],
    ]);
    const snap = new NodeSnapshot(60_000, { pageSize: 1, betweenPages: async (ms) => void pauses.push(ms) });
    const heard = liveness({ a: 59_000, b: 59_000, c: 59_000, d: 59_000 }); // healthy throughout
    await snap.refresh(sql, 0);
    const before = [...snap.placementNodes(heard, 0, t)];
    await snap.refresh(sql, 60_000);
    await new Promise((r) => setImmediate(r));
    await snap.refresh(sql, 60_500); // taken in
    expect(since).toEqual([null, 'writers', '101', 'writers', 'writers', 'byId:b', '102']);
    expect(pauses).toHaveLength(2); // between its pages, not after the last
    const after = snap.placementNodes(heard, 60_500, t);
    // c is missing from the check and older than it: removed. d is missing too, but written after the check began: kept.
    expect(after.map((n) => [n.id, n.cordoned])).toEqual([
      ['a', false],
      ['b', true],
      ['d', true],
    ]);
    expect(after[0]).toBe(before[0]); // a is unchanged: the same object, not rebuilt
    expect(
      snap
        .planIndexes()
        .index.fitting({ gpus: 1, gpuModel: null, cpuCores: 0, memoryMiB: 0 }, new Set())
        .map((n) => n.id),
    ).toEqual(['a']);
  });

  it('fails the refresh that finds the check failed, and checks again at the next', async () => {
    const { sql, since } = fakeSql([[row('a')], [], [row('a')], [row('a')], [row('a')]], (n) => {
      if (n === 2) throw new Error('connection lost');
    });
    const snap = new NodeSnapshot(60_000);
    await snap.refresh(sql, 0);
    await snap.refresh(sql, 60_000); // the check (call 2) fails in the background
    await expect(snap.refresh(sql, 61_000)).rejects.toThrow('connection lost');
    await snap.refresh(sql, 62_000); // a new check starts at once
    expect(since.filter((x) => x === 'writers')).toHaveLength(2);
  });

  it.each([
    ['heard just now', 10_000, 10_000, 'HEALTHY'],
    ['silent past the suspect timeout', 0, 15_000, 'DEGRADED'],
    ['silent past the dead timeout', 0, 40_000, 'UNHEALTHY'],
    ['never heard', null, 0, 'UNHEALTHY'],
  ])('judges a node %s', async (_name, heardAt, now, health) => {
    const snap = new NodeSnapshot(60_000);
    await snap.refresh(fakeSql([[row('a')]]).sql, 0);
    expect(snap.placementNodes(liveness(heardAt === null ? {} : { a: heardAt }), now, t)[0].health).toBe(health);
  });

  it('ages a node between liveness reads and sees it heard again', async () => {
    const snap = new NodeSnapshot(60_000);
    await snap.refresh(fakeSql([[row('a')]]).sql, 0);
    const live = liveness({ a: 0 });
    const first = snap.placementNodes(live, 1_000, t)[0];
    expect(first.health).toBe('HEALTHY');
    expect(snap.placementNodes(live, 2_000, t)[0]).toBe(first); // unchanged: the same object
    expect(snap.placementNodes(live, 15_000, t)[0].health).toBe('DEGRADED');
    live.hear('a', 16_000);
    expect(snap.placementNodes(live, 16_000, t)[0].health).toBe('HEALTHY');
    expect(snap.placementNodes(live, 56_000, t)[0].health).toBe('UNHEALTHY');
  });

  it('keeps its fit index in step with the nodes it hands out: row changes, health changes, the periodic check', async () => {
    const { sql } = fakeSql([
      [row('a'), row('b'), row('c', { gpus_allocated: 4 })],
      [row('b', { gpus_allocated: 7, version: '2', changed_xid_text: '2' }), row('d')],
      [writer('a', '1'), writer('b', '3'), writer('c', '1'), writer('d', '1')],
      [],
      [row('b', { gpus_allocated: 1, version: '3', changed_xid_text: '3' })],
    ]);
    const snap = new NodeSnapshot(60_000);
    const shapes = [0, 1, 2, 4, 8].map((gpus) => ({ gpus, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 }));
    const racks = (g: GangCandidates, r: (typeof shapes)[number]) =>
      [...g.racks(r, new Set())]
        .map(
          ([rack, ns]) =>
            `${rack}:${ns
              .map((n) => n.id)
              .sort()
              .join(',')}`,
        )
        .sort();
    const same = (nodes: PlacementNode[]) => {
      const fresh = new FitIndex(nodes);
      const freshGangs = new GangCandidates(fresh);
      const { index, gangs } = snap.planIndexes();
      for (const r of shapes) {
        expect(index.best(r, new Set())?.id ?? null).toBe(fresh.best(r, new Set())?.id ?? null);
        expect(
          index
            .fitting(r, new Set())
            .map((n) => n.id)
            .sort(),
        ).toEqual(
          fresh
            .fitting(r, new Set())
            .map((n) => n.id)
            .sort(),
        );
        expect(racks(gangs, r)).toEqual(racks(freshGangs, r)); // asked once here, then kept current through the changes
      }
    };
    const live = liveness({ a: 0, b: 0, c: 0 });
    await snap.refresh(sql, 0);
    same(snap.placementNodes(live, 1_000, t));
    await snap.refresh(sql, 1_000); // b changed, d is new (and never heard: UNHEALTHY)
    live.hear('d', 2_000);
    same(snap.placementNodes(live, 16_000, t)); // a, b and c are DEGRADED by now; d is HEALTHY
    await snap.refresh(sql, 61_000); // the full period: every node's last writer checked, beside this refresh
    await snap.refresh(sql, 61_500); // and taken in here: b read again
    same(snap.placementNodes(liveness({ a: 61_000, b: 61_000, c: 61_000, d: 61_000 }), 61_000, t));
  });

  it('looks again only at what changed, and hands out what a fresh look at the whole fleet would, with its capacity', async () => {
    const ids = ['a', 'b', 'c', 'd', 'e'];
    const step = fc.record({
      advanceMs: fc.integer({ min: 0, max: 20_000 }),
      heard: fc.subarray(ids),
      rows: fc.array(fc.record({ id: fc.constantFrom(...ids), gpusAllocated: fc.integer({ min: 0, max: 8 }), cordoned: fc.boolean() }), { maxLength: 3 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 12 }), async (steps) => {
        const current = new Map(ids.map((id) => [id, row(id)]));
        const answers: Array<Array<Record<string, unknown>>> = [[...current.values()]];
        /** Every row as it is after each step. */
        const after: Array<Array<Record<string, unknown>>> = [];
        let version = 1;
        for (const s of steps) {
          const changed = s.rows.map((r) => ({ ...current.get(r.id)!, gpus_allocated: r.gpusAllocated, cordoned: r.cordoned, version: String(++version) }));
          for (const c of changed) current.set(c.id as string, c);
          answers.push(changed);
          after.push([...current.values()]);
        }
        const { sql } = fakeSql(answers);
        const snap = new NodeSnapshot(3_600_000);
        const live = liveness({ a: 0, b: 0, c: 0, d: 0 }); // e is never heard until a step hears it
        let now = 0;
        await snap.refresh(sql, now);
        snap.placementNodes(live, now, t);
        for (const [i, s] of steps.entries()) {
          now += s.advanceMs;
          for (const id of s.heard) live.hear(id, now);
          await snap.refresh(sql, now);
          const nodes = snap.placementNodes(live, now, t);
          // The reference: a snapshot that reads every row now and judges every node from scratch.
          const fresh = new NodeSnapshot(3_600_000);
          await fresh.refresh(fakeSql([after[i]]).sql, now);
          const expected = fresh.placementNodes(liveness({ ...live.heard }), now, t);
          expect(nodes).toEqual(expected);
          expect(snap.capacity()).toEqual(schedulableCapacity(expected));
          const { index } = snap.planIndexes();
          const freshIndex = new FitIndex(expected);
          for (const gpus of [0, 1, 4, 8]) {
            const r = { gpus, gpuModel: 'H100', cpuCores: 1, memoryMiB: 1 };
            expect(
              index
                .fitting(r, new Set())
                .map((n) => n.id)
                .sort(),
            ).toEqual(
              freshIndex
                .fitting(r, new Set())
                .map((n) => n.id)
                .sort(),
            );
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
