import { AbsenceVerdict, ContinuityClock, absenceCountsFrom, heardAt, interrupted, newClock } from './absence-clock';
import { DesiredRank, reconcileNode } from './node-reconciliation';

const clock = (lastAt: number | null, continuousSince: number | null, maxGapMs = 2_000, name = 'c'): ContinuityClock => ({
  name,
  lastAt,
  continuousSince,
  maxGapMs,
});

describe('heardAt', () => {
  it.each<[string, ContinuityClock, number, Pick<ContinuityClock, 'lastAt' | 'continuousSince'>]>([
    ['first moment starts continuity', newClock('c', 2_000), 100, { lastAt: 100, continuousSince: 100 }],
    ['a moment within the gap continues it', clock(100, 50), 2_100, { lastAt: 2_100, continuousSince: 50 }],
    ['a moment past the gap (the input was away) starts it again', clock(100, 50), 2_101, { lastAt: 2_101, continuousSince: 2_101 }],
    ['an older moment (received late) changes nothing', clock(1_000, 50), 900, { lastAt: 1_000, continuousSince: 50 }],
    ['after an interruption the next moment starts it again', interrupted(clock(1_000, 50)), 1_100, { lastAt: 1_100, continuousSince: 1_100 }],
  ])('%s', (_n, c, at, expected) => {
    expect(heardAt(c, at)).toEqual({ ...c, ...expected });
  });
});

describe('absenceCountsFrom', () => {
  it.each<[string, ContinuityClock[], number, AbsenceVerdict]>([
    [
      'every input continuous: from the latest start',
      [clock(9_900, 1_000, 2_000, 'beats'), clock(9_500, 4_000, 2_000, 'reports')],
      10_000,
      { kind: 'count', since: 4_000 },
    ],
    ['no inputs: from the beginning', [], 10_000, { kind: 'count', since: Number.NEGATIVE_INFINITY }],
    [
      'an input not heard since it (re)started',
      [clock(9_900, 1_000, 2_000, 'beats'), clock(null, null, 2_000, 'reports')],
      10_000,
      { kind: 'suspended', reason: 'reports: not heard since it (re)started' },
    ],
    [
      'an input silent past its gap (the broker is away)',
      [clock(7_000, 1_000, 2_000, 'reports')],
      10_000,
      { kind: 'suspended', reason: 'reports: silent for 3000 ms' },
    ],
    ['silent exactly its gap still counts', [clock(8_000, 1_000, 2_000, 'reports')], 10_000, { kind: 'count', since: 1_000 }],
    [
      "the whole fleet's newest beat is old (every node stopped at once, or the beats are lagging)",
      [clock(5_000, 0, 4_000, 'fleet beats')],
      10_000,
      { kind: 'suspended', reason: 'fleet beats: silent for 5000 ms' },
    ],
  ])('%s', (_n, clocks, now, expected) => {
    expect(absenceCountsFrom(clocks, now)).toEqual(expected);
  });
});

describe("a broker restart is not the nodes' silence", () => {
  const GRACE = 3_000;
  const running: DesiredRank = { jobId: 'j', attempt: 1, rankState: 'RUNNING', cancelRequested: false, placedAt: 0 };
  // A job ends on its node just before the broker stops at 10 s; its final report waits in the
  // agent's retry queue. The broker is away 10-18 s. After it, beats (without the job) flow at
  // once and the report arrives a few seconds later.
  let reports = heardAt(heardAt(newClock('reports', 2_000), 9_000), 10_000);
  const beforeStop = reconcileNode([], [running], 10_000, 1_000, new Map(), GRACE, absenceCountsFrom([reports], 10_000).kind === 'count' ? 0 : null);

  it('counted from the last fetch before the outage (the old rule), the first beat after it loses the attempt', () => {
    expect(reconcileNode([], [running], 18_500, 1_000, beforeStop.missingSince, GRACE).actions).toEqual([
      { kind: 'LOST', jobId: 'j', attempt: 1, reason: 'PHANTOM' },
    ]);
  });

  it('counted from when the view is continuous again, it waits a whole grace for the late report', () => {
    const during = absenceCountsFrom([reports], 15_000);
    expect(during.kind).toBe('suspended');
    reports = heardAt(reports, 18_200); // the first fetch after the broker returned
    const after = absenceCountsFrom([reports], 18_500);
    expect(after).toEqual({ kind: 'count', since: 18_200 });
    const since = after.kind === 'count' ? after.since : null;
    expect(reconcileNode([], [running], 18_500, 1_000, beforeStop.missingSince, GRACE, since).actions).toEqual([]);
    expect(reconcileNode([], [running], 21_199, 1_000, beforeStop.missingSince, GRACE, since).actions).toEqual([]);
    // Still missing a whole grace after the view came back: that absence is the node's.
    expect(reconcileNode([], [running], 21_200, 1_000, beforeStop.missingSince, GRACE, since).actions).toEqual([
      { kind: 'LOST', jobId: 'j', attempt: 1, reason: 'PHANTOM' },
    ]);
  });

  it('judges nothing absent while the view is stale, and keeps the record of the miss', () => {
    const r = reconcileNode([], [running], 60_000, 1_000, beforeStop.missingSince, GRACE, null);
    expect(r.actions).toEqual([]);
    expect([...r.missingSince]).toEqual([['j#1', 10_000]]);
  });
});
