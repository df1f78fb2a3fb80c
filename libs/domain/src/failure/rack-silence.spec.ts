import { rackSilence } from './rack-silence';

const SUSPECT_MS = 15_000;

describe('rackSilence', () => {
  it.each<[string, Array<[string, number]>, Record<string, [number, number]>]>([
    [
      'counts silence past the suspect timeout, not only the dead',
      [
        ['r1', 20_000],
        ['r1', 0],
        ['r1', 50_000],
      ],
      { r1: [3, 2] },
    ],
    ['exactly at the suspect timeout is silent', [['r1', 15_000]], { r1: [1, 1] }],
    [
      'racks apart',
      [
        ['r1', 0],
        ['r2', 16_000],
        ['r2', 0],
      ],
      { r1: [1, 0], r2: [2, 1] },
    ],
    ['no nodes, no racks', [], {}],
  ])('%s', (_n, nodes, expected) => {
    const silence = new Map(nodes.map(([, s], i) => [`n${i}`, s]));
    const racks = rackSilence(
      nodes.map(([rack], i) => ({ nodeId: `n${i}`, rack })),
      (id) => silence.get(id)!,
      SUSPECT_MS,
    );
    expect(Object.fromEntries([...racks].map(([k, r]) => [k, [r.total, r.silent]]))).toEqual(expected);
  });
});
