import fc from 'fast-check';
import { ConcurrencyLimitOptions, ConcurrencyLimitState, admits, initialConcurrencyLimit, nextConcurrencyLimit } from './concurrency-limit';

const opts: ConcurrencyLimitOptions = { targetMs: 200, min: 16, max: 1024, backoff: 0.9 };
const at = (limit: number, lastDecreaseAtMs = Number.NEGATIVE_INFINITY): ConcurrencyLimitState => ({ limit, lastDecreaseAtMs });

describe('nextConcurrencyLimit', () => {
  it.each<[string, ConcurrencyLimitState, { latencyMs: number; inFlight: number; atMs: number }, number]>([
    ['a slow request shrinks the limit to 0.9 of what was in flight', at(1024), { latencyMs: 250, inFlight: 100, atMs: 1000 }, 90],
    ['never below min', at(20), { latencyMs: 250, inFlight: 5, atMs: 1000 }, 16],
    ['a slow request with more in flight than the limit shrinks from the limit', at(50), { latencyMs: 900, inFlight: 80, atMs: 1000 }, 45],
    ['a second slow request within targetMs of the last decrease changes nothing', at(90, 900), { latencyMs: 250, inFlight: 90, atMs: 1000 }, 90],
    ['one targetMs later it shrinks again', at(90, 800), { latencyMs: 250, inFlight: 90, atMs: 1000 }, 81],
    ['a request in time with the limit at least half used grows it by 1/limit', at(100), { latencyMs: 20, inFlight: 50, atMs: 1000 }, 100.01],
    ['a request in time while the limit is mostly idle leaves it', at(100), { latencyMs: 20, inFlight: 49, atMs: 1000 }, 100],
    ['never above max', at(1024), { latencyMs: 20, inFlight: 1000, atMs: 1000 }, 1024],
    ['exactly the target is in time', at(100), { latencyMs: 200, inFlight: 60, atMs: 1000 }, 100.01],
  ])('%s', (_name, state, sample, limit) => {
    expect(nextConcurrencyLimit(state, sample, opts).limit).toBeCloseTo(limit, 9);
  });

  it('grows by about one for each round of limit requests in time', () => {
    let state = at(50);
    for (let i = 0; i < 50; i++) state = nextConcurrencyLimit(state, { latencyMs: 20, inFlight: 50, atMs: i }, opts);
    expect(Math.floor(state.limit)).toBe(50);
    expect(state.limit).toBeGreaterThan(50.9);
    expect(admits(state, 49)).toBe(true);
    expect(admits(state, 50)).toBe(false);
  });

  it('starts wide open', () => {
    expect(initialConcurrencyLimit(opts).limit).toBe(1024);
    expect(admits(initialConcurrencyLimit(opts), 1023)).toBe(true);
    expect(admits(initialConcurrencyLimit(opts), 1024)).toBe(false);
  });

  const sample = fc.record({
    latencyMs: fc.double({ min: 0, max: 10_000, noNaN: true }),
    inFlight: fc.integer({ min: 0, max: 5000 }),
    dtMs: fc.integer({ min: 0, max: 1000 }),
  });

  it('stays within [min, max], moves up by at most one, and never up after a slow request', () => {
    fc.assert(
      fc.property(fc.array(sample, { maxLength: 300 }), (samples) => {
        let state = initialConcurrencyLimit(opts);
        let now = 0;
        for (const s of samples) {
          now += s.dtMs;
          const next = nextConcurrencyLimit(state, { latencyMs: s.latencyMs, inFlight: s.inFlight, atMs: now }, opts);
          expect(next.limit).toBeGreaterThanOrEqual(opts.min);
          expect(next.limit).toBeLessThanOrEqual(opts.max);
          expect(next.limit - state.limit).toBeLessThanOrEqual(1);
          if (s.latencyMs > opts.targetMs) expect(next.limit).toBeLessThanOrEqual(state.limit);
          state = next;
        }
      }),
    );
  });

  it('a stack that answers in time only while at most N are inside ends up letting about N in', () => {
    // A toy stack: latency grows with what is in flight beyond its capacity (Little's law).
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 600 }), (capacity) => {
        let state = initialConcurrencyLimit(opts);
        for (let t = 0; t < 20_000; t += 5) {
          const inFlight = state.limit; // an overload: every slot is always taken
          const latencyMs = inFlight <= capacity ? 50 : 50 + ((inFlight - capacity) / capacity) * 1000;
          state = nextConcurrencyLimit(state, { latencyMs, inFlight, atMs: t }, opts);
        }
        expect(state.limit).toBeLessThanOrEqual(Math.ceil(capacity * 1.25) + 1);
        expect(state.limit).toBeGreaterThanOrEqual(Math.max(opts.min, Math.floor(capacity * 0.85)));
      }),
    );
  });
});
