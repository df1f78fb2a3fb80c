import { judgeStartFailures, nodesToAvoid } from './start-failures';

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

describe('nodesToAvoid', () => {
  const many = Array.from({ length: 16 }, (_, i) => `n${i}`);
  it.each<[string, string[], string[], string[]]>([
    ['the first failure', [], ['a'], ['a']],
    ['a gang failing on two nodes', ['a'], ['b', 'c'], ['a', 'b', 'c']],
    ['a node failed on again moves to the end, once', ['a', 'b'], ['a'], ['b', 'a']],
    ['a node named twice counts once', [], ['a', 'a'], ['a']],
    ['past the cap the oldest go', many, ['x'], [...many.slice(1), 'x']],
  ])('%s', (_n, before, failedOn, after) => {
    expect(nodesToAvoid(before, failedOn)).toEqual(after);
  });
});
