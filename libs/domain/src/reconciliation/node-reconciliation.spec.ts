import { DesiredRank, ObservedAttempt, ReconcileAction, reconcileNode } from './node-reconciliation';

const want = (over: Partial<DesiredRank> = {}): DesiredRank => ({
  jobId: 'j',
  attempt: 1,
  rankState: 'SCHEDULED',
  cancelRequested: false,
  placedAt: 0,
  ...over,
});
const obs = (jobId = 'j', attempt = 1): ObservedAttempt => ({ jobId, attempt });

describe('reconcileNode', () => {
  it.each<[string, ObservedAttempt[], DesiredRank[], number, ReconcileAction[]]>([
    ['in agreement', [obs()], [want({ rankState: 'RUNNING' })], 10_000, []],
    ['nothing anywhere', [], [], 10_000, []],
    ['RUN lost: repeated after the grace period', [], [want()], 10_000, [{ kind: 'RUN', jobId: 'j', attempt: 1, reason: 'MISSING' }]],
    ['RUN just sent: within the grace period', [], [want({ placedAt: 9_000 })], 10_000, []],
    ['scheduled and already running', [obs()], [want()], 10_000, []],
    ['unknown job running', [obs('x')], [], 10_000, [{ kind: 'KILL', jobId: 'x', attempt: 1, reason: 'ORPHAN' }]],
    ['old attempt running', [obs('j', 1)], [want({ attempt: 2, placedAt: 9_999 })], 10_000, [{ kind: 'KILL', jobId: 'j', attempt: 1, reason: 'ORPHAN' }]],
    [
      'cancel intent not carried out',
      [obs()],
      [want({ rankState: 'RUNNING', cancelRequested: true })],
      10_000,
      [{ kind: 'KILL', jobId: 'j', attempt: 1, reason: 'CANCEL_REQUESTED' }],
    ],
    ['cancelled before it started: no RUN', [], [want({ cancelRequested: true })], 10_000, []],
    ['running rank missing from the beat is not re-run (first miss starts the clock)', [], [want({ rankState: 'RUNNING' })], 10_000, []],
  ])('%s', (_n, observed, desired, now, expected) => {
    expect(reconcileNode(observed, desired, now, 5_000).actions).toEqual(expected);
  });
});

describe('phantoms', () => {
  const running = want({ rankState: 'RUNNING' });
  it('loses a RUNNING rank only after it has been missing for the phantom grace', () => {
    const first = reconcileNode([], [running], 10_000, 1_000, new Map(), 5_000);
    expect(first.actions).toEqual([]);
    expect([...first.missingSince]).toEqual([['j#1', 10_000]]);
    const stillWithin = reconcileNode([], [running], 14_999, 1_000, first.missingSince, 5_000);
    expect(stillWithin.actions).toEqual([]);
    const past = reconcileNode([], [running], 15_000, 1_000, stillWithin.missingSince, 5_000);
    expect(past.actions).toEqual([{ kind: 'LOST', jobId: 'j', attempt: 1, reason: 'PHANTOM' }]);
  });

  it('forgets a miss as soon as the node lists the rank again', () => {
    const first = reconcileNode([], [running], 10_000, 1_000, new Map(), 5_000);
    const back = reconcileNode([obs()], [running], 11_000, 1_000, first.missingSince, 5_000);
    expect(back.missingSince.size).toBe(0);
    expect(reconcileNode([], [running], 15_500, 1_000, back.missingSince, 5_000).actions).toEqual([]);
  });
});

describe('start timeouts', () => {
  const TIMEOUT = 30_000;
  const at = (observed: ObservedAttempt[], desired: DesiredRank[], now: number, absenceFrom: number | null = 0) =>
    reconcileNode(observed, desired, now, 5_000, new Map(), 15_000, absenceFrom, TIMEOUT).actions;
  it.each<[string, ObservedAttempt[], DesiredRank[], number, number | null, ReconcileAction[]]>([
    [
      'placed, not started, within the timeout: the RUN is repeated',
      [],
      [want({ placedAt: 1_000 })],
      30_999,
      0,
      [{ kind: 'RUN', jobId: 'j', attempt: 1, reason: 'MISSING' }],
    ],
    [
      'placed, not started, at the timeout: lost, not repeated',
      [],
      [want({ placedAt: 1_000 })],
      31_000,
      0,
      [{ kind: 'LOST', jobId: 'j', attempt: 1, reason: 'START_TIMEOUT' }],
    ],
    ['the beat lists it (RUNNING not applied yet): started', [obs()], [want({ placedAt: 1_000 })], 60_000, 0, []],
    ['reported RUNNING: never a start failure', [obs()], [want({ rankState: 'RUNNING', placedAt: 1_000 })], 60_000, 0, []],
    ['cancelled before it started: the cancel decides, not the timeout', [], [want({ placedAt: 1_000, cancelRequested: true })], 60_000, 0, []],
    [
      'the view is stale: not judged, the RUN still repeated',
      [],
      [want({ placedAt: 1_000 })],
      60_000,
      null,
      [{ kind: 'RUN', jobId: 'j', attempt: 1, reason: 'MISSING' }],
    ],
    [
      'past it by the clock, but the view is continuous only since 40 s: not yet',
      [],
      [want({ placedAt: 1_000 })],
      60_000,
      40_000,
      [{ kind: 'RUN', jobId: 'j', attempt: 1, reason: 'MISSING' }],
    ],
  ])('%s', (_n, observed, desired, now, absenceFrom, expected) => {
    expect(at(observed, desired, now, absenceFrom)).toEqual(expected);
  });

  it('without a timeout (the default) a rank that never starts has its RUN repeated for ever', () => {
    expect(reconcileNode([], [want()], 10_000_000, 5_000).actions).toEqual([{ kind: 'RUN', jobId: 'j', attempt: 1, reason: 'MISSING' }]);
  });
});
