import { DesiredRank, ObservedAttempt, ReconcileAction, reconcileNode } from './node-reconciliation';

const want = (over: Partial<DesiredRank> = {}): DesiredRank => ({ jobId: 'j', attempt: 1, rankState: 'SCHEDULED', cancelRequested: false, placedAt: 0, ...over });
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
    ['cancel intent not carried out', [obs()], [want({ rankState: 'RUNNING', cancelRequested: true })], 10_000, [{ kind: 'KILL', jobId: 'j', attempt: 1, reason: 'CANCEL_REQUESTED' }]],
    ['cancelled before it started: no RUN', [], [want({ cancelRequested: true })], 10_000, []],
    ['running rank missing from the beat is not re-run', [], [want({ rankState: 'RUNNING' })], 10_000, []],
  ])('%s', (_n, observed, desired, now, expected) => {
    expect(reconcileNode(observed, desired, now, 5_000)).toEqual(expected);
  });
});
