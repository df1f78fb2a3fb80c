import fc from 'fast-check';
import { USAGE_GRANULARITIES } from './usage-buckets';
import { HeldInterval, UsageRange, UsageReportBuilder } from './usage-report';

const H = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const held = (over: Partial<HeldInterval>): HeldInterval => ({
  owner: 'alice',
  queue: 'default',
  gpuModel: 'H100',
  gpus: 8,
  cpuCores: 4,
  attempt: 1,
  rank: 0,
  startMs: T0,
  endMs: T0 + H,
  ...over,
});

function report(range: UsageRange, intervals: HeldInterval[]) {
  const b = new UsageReportBuilder(range);
  intervals.forEach((i) => b.addInterval(i));
  return b.rows();
}

describe('UsageReportBuilder', () => {
  it('counts GPU- and CPU-time per bucket and group, an attempt where it started, a job at its first attempt', () => {
    const rows = report({ fromMs: T0, toMs: T0 + 3 * H, granularity: 'hour', groupBy: ['owner'] }, [
      held({ startMs: T0 + H / 2, endMs: T0 + 2 * H }), // rank 0 of alice's first attempt
      held({ rank: 1, startMs: T0 + H / 2, endMs: T0 + 2 * H }), // rank 1: time, not another attempt
      held({ attempt: 2, startMs: T0 + 2 * H, endMs: T0 + 5 * H }), // a retry: an attempt, not a job
      held({ owner: 'bob', gpus: 0, gpuModel: null, startMs: T0 - H, endMs: T0 + H }), // started before the range: no attempt here
    ]);
    expect(rows).toEqual([
      { start: T0, owner: 'alice', queue: null, gpuModel: null, gpuMs: (2 * 8 * H) / 2, cpuMs: (2 * 4 * H) / 2, attempts: 1, jobs: 1 },
      { start: T0, owner: 'bob', queue: null, gpuModel: null, gpuMs: 0, cpuMs: 4 * H, attempts: 0, jobs: 0 },
      { start: T0 + H, owner: 'alice', queue: null, gpuModel: null, gpuMs: 2 * 8 * H, cpuMs: 2 * 4 * H, attempts: 0, jobs: 0 },
      { start: T0 + 2 * H, owner: 'alice', queue: null, gpuModel: null, gpuMs: 8 * H, cpuMs: 4 * H, attempts: 1, jobs: 0 },
    ]);
  });

  it('regroups finer cells into its buckets and groups', () => {
    const b = new UsageReportBuilder({ fromMs: T0, toMs: T0 + 48 * H, granularity: 'day', groupBy: ['queue'] });
    const cell = { owner: 'a', queue: 'q', gpuModel: 'H100', gpuMs: 10, cpuMs: 1, attempts: 1, jobs: 1 };
    b.addCell({ ...cell, start: T0 + H });
    b.addCell({ ...cell, start: T0 + 5 * H, owner: 'b' });
    b.addCell({ ...cell, start: T0 + 25 * H });
    expect(b.rows()).toEqual([
      { start: T0, owner: null, queue: 'q', gpuModel: null, gpuMs: 20, cpuMs: 2, attempts: 2, jobs: 2 },
      { start: T0 + 24 * H, owner: null, queue: 'q', gpuModel: null, gpuMs: 10, cpuMs: 1, attempts: 1, jobs: 1 },
    ]);
  });

  it('the rows of any split of a range add up to the range (property)', () => {
    const arb = fc
      .record({
        owner: fc.constantFrom('a', 'b'),
        queue: fc.constantFrom('q', 'r'),
        gpuModel: fc.constantFrom('H100', null),
        gpus: fc.integer({ min: 0, max: 64 }),
        cpuCores: fc.integer({ min: 1, max: 96 }),
        attempt: fc.integer({ min: 1, max: 3 }),
        rank: fc.integer({ min: 0, max: 2 }),
        startMs: fc.integer({ min: 0, max: 200 * H }),
        len: fc.integer({ min: 0, max: 100 * H }),
      })
      .map(({ len, ...i }) => ({ ...i, startMs: T0 + i.startMs, endMs: T0 + i.startMs + len }));
    fc.assert(
      fc.property(
        fc.array(arb, { maxLength: 20 }),
        fc.constantFrom(...USAGE_GRANULARITIES),
        fc.array(fc.integer({ min: 1, max: 299 }), { maxLength: 4 }),
        (intervals, granularity, cuts) => {
          const bounds = [0, ...new Set(cuts), 300].sort((x, y) => x - y).map((h) => T0 + h * H);
          const total = (rows: ReturnType<typeof report>) =>
            rows.reduce((s, r) => [s[0] + r.gpuMs, s[1] + r.cpuMs, s[2] + r.attempts, s[3] + r.jobs], [0, 0, 0, 0]);
          const whole = total(report({ fromMs: bounds[0], toMs: bounds[bounds.length - 1], granularity, groupBy: ['owner', 'queue', 'gpuModel'] }, intervals));
          const parts = bounds.slice(1).map((to, i) => total(report({ fromMs: bounds[i], toMs: to, granularity, groupBy: ['owner'] }, intervals)));
          expect(parts.reduce((s, p) => s.map((x, i) => x + p[i]), [0, 0, 0, 0])).toEqual(whole);
        },
      ),
    );
  });
});
