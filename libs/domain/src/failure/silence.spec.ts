import { ingestionWatermark, silenceMs } from './silence';

describe('ingestionWatermark', () => {
  it.each<[number | null, number, number | null]>([
    [null, 1000, null],
    [990, 1000, 990],
    [1000 - 5000, 1000, 1000 - 5000],
    [1000 - 5001, 1000, null], // stalled: nobody is judged
    [2000, 1000, 1000], // clock skew: never ahead of now
  ])('newest %p at now %i -> %p', (newest, now, expected) => expect(ingestionWatermark(newest, now, 5000)).toBe(expected));
});

describe('silenceMs', () => {
  it.each<[number | null, number, number, number]>([
    [900, 1000, 0, 100],
    [null, 1000, 400, 600], // never heard since info began at 400
    [100, 1000, 400, 600], // heard before a Redis restart at 400: counts from 400
    [1000, 1000, 0, 0],
  ])('last seen %p, watermark %i, since %i -> %i', (last, wm, since, expected) => expect(silenceMs(last, wm, since)).toBe(expected));
});
