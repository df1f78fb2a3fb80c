import { judgeStartFailures } from './start-failures';

describe('judgeStartFailures', () => {
  it.each<[string, number, number, boolean, 'count' | 'cordon']>([
    ['the first failure', 1, 3, false, 'count'],
    ['one short of the threshold', 2, 3, false, 'count'],
    ['the threshold reached', 3, 3, false, 'cordon'],
    ['past it (a cordon lifted by another path than an uncordon)', 5, 3, false, 'cordon'],
    ['already cordoned: the cordon and its reason stay', 3, 3, true, 'count'],
    ['a threshold of one cordons at the first', 1, 1, false, 'cordon'],
  ])('%s', (_n, inARow, threshold, cordoned, kind) => {
    expect(judgeStartFailures(inARow, threshold, cordoned).kind).toBe(kind);
  });
});
