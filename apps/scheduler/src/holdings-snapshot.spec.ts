import { QueueHoldings, Sql } from '@gantry/persistence';
import { HoldingsSnapshot } from './holdings-snapshot';

/** A Sql that answers the holdings query with `rows` and counts the reads. */
function fakeSql(rows: Array<{ queue: string; gpus: number; cpu: number; mem: number }>): Sql & { reads: number } {
  const sql = {
    reads: 0,
    async rows<T>(): Promise<T[]> {
      sql.reads++;
      return rows as unknown as T[];
    },
    afterCommit: (fn: () => void) => fn(),
  };
  return sql;
}

const h = (gpus: number, cpuCores: number, memoryMiB: number): QueueHoldings => ({ gpus, cpuCores, memoryMiB });

describe('HoldingsSnapshot', () => {
  it.each<[string, number[], number]>([
    ['reads once within the refresh interval', [0, 500, 999], 1],
    ['reads again once the interval has passed', [0, 1000, 1500, 2000], 3],
  ])('%s', async (_name, times, reads) => {
    const sql = fakeSql([{ queue: 'a', gpus: 8, cpu: 4, mem: 100 }]);
    const snap = new HoldingsSnapshot(1000);
    for (const t of times) await snap.refresh(sql, t);
    expect(sql.reads).toBe(reads);
  });

  it('own placements count at once, per node of a gang, until the next read replaces them', async () => {
    const sql = fakeSql([{ queue: 'a', gpus: 8, cpu: 4, mem: 100 }]);
    const snap = new HoldingsSnapshot(1000);
    await snap.refresh(sql, 0);
    snap.add('a', h(2, 1, 10), 3);
    snap.add('b', h(1, 1, 1), 1);
    expect(await snap.refresh(sql, 10)).toEqual(
      new Map([
        ['a', h(14, 7, 130)],
        ['b', h(1, 1, 1)],
      ]),
    );
    expect(await snap.refresh(sql, 1000)).toEqual(new Map([['a', h(8, 4, 100)]]));
  });
});
