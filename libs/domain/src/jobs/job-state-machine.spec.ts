import { JOB_STATES, JobState } from './job-state';
import { IllegalTransitionError, assertTransition, decideTransition, transitionPath } from './job-state-machine';

const legal: Array<[JobState, JobState]> = [
  ['QUEUED', 'SCHEDULED'],
  ['QUEUED', 'CANCELLED'],
  ['SCHEDULED', 'RUNNING'],
  ['SCHEDULED', 'CANCELLED'],
  ['SCHEDULED', 'FAILED'],
  ['SCHEDULED', 'QUEUED'],
  ['RUNNING', 'SUCCEEDED'],
  ['RUNNING', 'CANCELLED'],
  ['RUNNING', 'FAILED'],
  ['RUNNING', 'QUEUED'],
];
const isLegal = (from: JobState, to: JobState) => legal.some(([f, t]) => f === from && t === to);
const terminal: JobState[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

const everyPair = JOB_STATES.flatMap((from) => JOB_STATES.map((to) => [from, to] as [JobState, JobState]));

describe('decideTransition over every (state, target) pair', () => {
  it.each(everyPair)('%s -> %s', (from, to) => {
    const decision = decideTransition(from, to);
    if (from === to) {
      expect(decision).toEqual({ kind: 'noop', state: from });
    } else if (terminal.includes(from)) {
      expect(decision).toEqual({ kind: 'reject', from, to, reason: 'TERMINAL_STATE' });
    } else if (isLegal(from, to)) {
      expect(decision).toEqual({ kind: 'apply', from, to });
    } else {
      expect(decision).toEqual({ kind: 'reject', from, to, reason: 'ILLEGAL_TRANSITION' });
    }
  });

  it('covers all 36 pairs', () => expect(everyPair).toHaveLength(36));
});

describe('transitionPath', () => {
  it.each<[JobState, JobState, JobState[] | null]>([
    ['SCHEDULED', 'SUCCEEDED', ['RUNNING', 'SUCCEEDED']],
    ['SCHEDULED', 'RUNNING', ['RUNNING']],
    ['RUNNING', 'RUNNING', []],
    ['QUEUED', 'SUCCEEDED', null],
    ['SUCCEEDED', 'RUNNING', null],
    ['CANCELLED', 'FAILED', null],
  ])('%s to %s', (from, to, expected) => expect(transitionPath(from, to)).toEqual(expected));
});

describe('assertTransition', () => {
  it('passes a legal change and throws on anything else', () => {
    expect(() => assertTransition('QUEUED', 'SCHEDULED')).not.toThrow();
    expect(() => assertTransition('SUCCEEDED', 'RUNNING')).toThrow(IllegalTransitionError);
    expect(() => assertTransition('QUEUED', 'RUNNING')).toThrow(/ILLEGAL_TRANSITION/);
    expect(() => assertTransition('RUNNING', 'RUNNING')).toThrow(/no change/);
  });
});
