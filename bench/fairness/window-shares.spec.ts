import { shareWindow, shareWindows, summariseShares } from './window-shares';
import { unionMs, waitsPastGrace } from './timeline';

const weights = new Map([
  ['a', 3],
  ['b', 1],
]);

describe('unionMs', () => {
  it.each([
    [
      [
        [0, 10],
        [5, 15],
      ],
      0,
      100,
      15,
    ],
    [
      [
        [0, 10],
        [20, 30],
      ],
      0,
      100,
      20,
    ],
    [
      [
        [0, 10],
        [20, 30],
      ],
      5,
      25,
      10,
    ],
    [[[0, null]], 0, 50, 50],
    [[], 0, 50, 0],
  ] as const)('%j within [%d, %d) -> %d', (intervals, from, to, expected) => expect(unionMs(intervals as never, from, to)).toBe(expected));
});

describe('waitsPastGrace', () => {
  it('keeps the waits longer than the grace, each from the grace on', () => {
    const got = waitsPastGrace(
      [
        { team: 'a', submitMs: 0, startMs: 1_000 },
        { team: 'a', submitMs: 0, startMs: 2_000 },
        { team: 'a', submitMs: 2_000, startMs: 7_000 },
        { team: 'b', submitMs: 5_000, startMs: null },
      ],
      2_000,
    );
    expect(got).toEqual([
      { team: 'a', submitMs: 4_000, startMs: 7_000 },
      { team: 'b', submitMs: 7_000, startMs: null },
    ]);
  });
});

describe('shareWindow', () => {
  it('puts shares beside weighted entitlements when both teams are backlogged', () => {
    // a holds 6 GPUs, b 2, over the whole window; both have a job waiting throughout.
    const w = shareWindow(
      [
        { team: 'a', gpus: 6, startMs: 0, endMs: null },
        { team: 'b', gpus: 2, startMs: 0, endMs: null },
      ],
      [
        { team: 'a', submitMs: 0, startMs: null },
        { team: 'b', submitMs: 0, startMs: null },
      ],
      weights,
      0,
      60_000,
      0.9,
    )!;
    expect(w.teams.find((t) => t.team === 'a')).toMatchObject({ gpuSeconds: 360, share: 0.75, entitlement: 0.75, backlogged: true });
    expect(w.teams.find((t) => t.team === 'b')).toMatchObject({ share: 0.25, entitlement: 0.25 });
    expect(w.jain).toBeCloseTo(1, 12);
  });

  it('entitles a team that waited too little of the window to what it used', () => {
    const w = shareWindow(
      [
        { team: 'a', gpus: 7, startMs: 0, endMs: null },
        { team: 'b', gpus: 1, startMs: 0, endMs: null },
      ],
      [
        { team: 'a', submitMs: 0, startMs: null },
        { team: 'b', submitMs: 0, startMs: 30_000 },
      ],
      weights,
      0,
      60_000,
      0.9,
    )!;
    expect(w.teams.find((t) => t.team === 'b')).toMatchObject({ backlogged: false, share: 0.125, entitlement: 0.125 });
    expect(w.teams.find((t) => t.team === 'a')!.entitlement).toBeCloseTo(0.875, 12);
  });

  it('shows a team held below its entitlement, and Jain below 1', () => {
    const w = shareWindow(
      [
        { team: 'a', gpus: 4, startMs: 0, endMs: null },
        { team: 'b', gpus: 4, startMs: 0, endMs: null },
      ],
      [
        { team: 'a', submitMs: 0, startMs: null },
        { team: 'b', submitMs: 0, startMs: null },
      ],
      weights,
      0,
      60_000,
      0.9,
    )!;
    expect(w.teams.find((t) => t.team === 'a')).toMatchObject({ share: 0.5, entitlement: 0.75 });
    expect(w.jain).toBeLessThan(0.9);
  });

  it('is null when nothing was delivered', () => {
    expect(shareWindow([], [], weights, 0, 1000, 0.9)).toBeNull();
  });
});

describe('shareWindows and summariseShares', () => {
  // a alone for the first 60 s (nothing of b waits), then both backlogged and split 3:1.
  const holdings = [
    { team: 'a', gpus: 8, startMs: 0, endMs: 60_000 },
    { team: 'a', gpus: 6, startMs: 60_000, endMs: null },
    { team: 'b', gpus: 2, startMs: 60_000, endMs: null },
  ];
  const waits = [
    { team: 'a', submitMs: 0, startMs: null },
    { team: 'b', submitMs: 60_000, startMs: null },
  ];

  it('slides windows of the length asked, every step, inside [from, to)', () => {
    const ws = shareWindows(holdings, waits, weights, { fromMs: 0, toMs: 180_000, windowMs: 60_000, stepMs: 30_000, backlogShare: 0.9 });
    expect(ws.map((w) => [w.startMs, w.endMs])).toEqual([
      [0, 60_000],
      [30_000, 90_000],
      [60_000, 120_000],
      [90_000, 150_000],
      [120_000, 180_000],
    ]);
  });

  it('counts the windows within the tolerance per team', () => {
    const ws = shareWindows(holdings, waits, weights, { fromMs: 60_000, toMs: 180_000, windowMs: 60_000, stepMs: 30_000, backlogShare: 0.9 });
    const sum = summariseShares(ws, 0.1);
    expect(sum.find((s) => s.team === 'a')).toMatchObject({ within: 3, windows: 3, meanShare: 0.75 });
    expect(sum.find((s) => s.team === 'a')!.maxDeviation).toBeCloseTo(0, 12);
    // From 0: the window where b waits half of it and got nothing is still fair (b not backlogged).
    const early = summariseShares(
      shareWindows(holdings, waits, weights, { fromMs: 30_000, toMs: 90_000, windowMs: 60_000, stepMs: 30_000, backlogShare: 0.4 }),
      0.1,
    );
    expect(early.find((s) => s.team === 'b')).toMatchObject({ within: 0, windows: 1 });
  });
});
