import { BandQueue, fairShareKey, fairShareView, ownerWeight, runningDecayedGpuSeconds } from './fair-share';
import { decayedGpuSeconds } from './usage-decay';

describe('fairShareKey', () => {
  it.each([
    // usage, gpus held, weight, horizon, key
    [0, 0, 1, 100, 0],
    [1000, 0, 1, 100, 1000],
    [1000, 0, 2, 100, 500],
    [0, 4, 1, 100, 400],
    [1000, 4, 2, 100, 700],
    [1000, 0, 0, 100, 1000 / 1e-9],
  ])('usage %d, %d GPUs held, weight %d, horizon %d s -> %d', (usage, gpus, weight, horizon, key) => {
    expect(fairShareKey({ usage, gpus }, weight, horizon)).toBeCloseTo(key);
  });
});

describe('fairShareView', () => {
  const q = (name: string, weight: number, usage: number, active = true): BandQueue => ({ name, weight, usage, active });
  it.each([
    ['nothing used yet: equal shares, factor 1', [q('a', 1, 0), q('b', 1, 0)], 'a', { share: 0.5, usage: 0, factor: 1 }],
    ['used exactly its share: factor 0.5', [q('a', 1, 50), q('b', 1, 50)], 'a', { share: 0.5, usage: 0.5, factor: 0.5 }],
    ['used it all', [q('a', 1, 100), q('b', 1, 0)], 'a', { share: 0.5, usage: 1, factor: 0.25 }],
    ['weights divide the share', [q('a', 3, 0), q('b', 1, 0)], 'a', { share: 0.75, usage: 0, factor: 1 }],
    ['idle queues of the band take no share', [q('a', 1, 10), q('b', 1, 0, false), q('c', 2, 0, false)], 'a', { share: 1, usage: 1, factor: 0.5 }],
    ['an idle queue still counts itself', [q('a', 1, 10), q('b', 1, 0, false)], 'b', { share: 0.5, usage: 0, factor: 1 }],
    ['a queue not in the band', [q('a', 1, 10)], 'z', { share: 0, usage: 0, factor: 1 }],
  ])('%s', (_name, band, name, expected) => {
    const v = fairShareView(name, band);
    expect(v.share).toBeCloseTo(expected.share);
    expect(v.usage).toBeCloseTo(expected.usage);
    expect(v.factor).toBeCloseTo(expected.factor);
  });
});

describe('runningDecayedGpuSeconds', () => {
  const hl = 3600;
  it.each([
    [[{ gpus: 4, ageS: 600 }]],
    [
      [
        { gpus: 4, ageS: 600 },
        { gpus: 8, ageS: 7200 },
        { gpus: 1, ageS: 0 },
      ],
    ],
    [[]],
  ])("equals the sum of each rank's decayedGpuSeconds: %j", (ranks) => {
    const now = 10_000_000;
    const gpus = ranks.reduce((s, r) => s + r.gpus, 0);
    const weighted = ranks.reduce((s, r) => s + r.gpus * Math.pow(2, -r.ageS / hl), 0);
    const each = ranks.reduce((s, r) => s + decayedGpuSeconds(r.gpus, now - r.ageS * 1000, now, now, hl), 0);
    expect(runningDecayedGpuSeconds(gpus, weighted, hl)).toBeCloseTo(each, 6);
  });
});

describe('ownerWeight', () => {
  it.each<[Record<string, number> | null | undefined, string, number]>([
    [null, 'alice', 1],
    [undefined, 'alice', 1],
    [{ alice: 3 }, 'alice', 3],
    [{ alice: 3 }, 'bob', 1],
    [{}, 'constructor', 1],
  ])('%j weighs %s %d', (weights, owner, expected) => expect(ownerWeight(weights, owner)).toBe(expected));
});
