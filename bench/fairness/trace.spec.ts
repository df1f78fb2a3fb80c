import fc from 'fast-check';
import { seededRandom } from '@gantry/testing';
import { DEFAULT_TEAMS, TeamSpec, describeTrace, drawRuntimeMs, generateTrace } from './trace';

const FLEET_GPUS = 1400;
const opts = { seed: 41, durationS: 300, fleetGpus: FLEET_GPUS, teams: DEFAULT_TEAMS };

describe('generateTrace', () => {
  it('is deterministic: the same options give the same trace', () => {
    expect(generateTrace(opts)).toEqual(generateTrace(opts));
  });

  it('changes with the seed', () => {
    expect(generateTrace({ ...opts, seed: 42 })).not.toEqual(generateTrace(opts));
  });

  it("leaves a team's jobs unchanged when another team is added after it", () => {
    const two = generateTrace({ ...opts, teams: DEFAULT_TEAMS.slice(0, 2) }).filter((j) => j.team === 'vision');
    expect(generateTrace(opts).filter((j) => j.team === 'vision')).toEqual(two);
  });

  it('is in submission order within the trace, with ids unique', () => {
    const t = generateTrace(opts);
    expect(t.every((j, i) => i === 0 || t[i - 1].submitAtMs <= j.submitAtMs)).toBe(true);
    expect(t.every((j) => j.submitAtMs >= 0 && j.submitAtMs < opts.durationS * 1000)).toBe(true);
    expect(new Set(t.map((j) => j.id)).size).toBe(t.length);
  });

  it('offers each team its load to within half the largest job it could draw, whatever the seed (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 30, max: 600 }), (seed, durationS) => {
        const o = { ...opts, seed, durationS };
        const t = generateTrace(o);
        for (const row of describeTrace(t, o)) {
          const team = DEFAULT_TEAMS.find((x) => x.name === row.team)!;
          const largest = Math.max(...team.shapes.map(([sh]) => sh.gpus * sh.nodes)) * team.runtime.maxS;
          const target = team.load * FLEET_GPUS * durationS;
          expect(Math.abs(row.gpuSeconds - target)).toBeLessThanOrEqual(largest / 2 + 1);
        }
      }),
      { numRuns: 20 },
    );
  });

  it('has gangs from 1 to 64 GPUs, four teams, several owners', () => {
    const t = generateTrace(opts);
    const sizes = new Set(t.map((j) => j.gpus * j.nodes));
    expect(Math.min(...sizes)).toBe(1);
    expect(Math.max(...sizes)).toBe(64);
    expect(new Set(t.map((j) => j.team)).size).toBeGreaterThanOrEqual(4);
    expect(new Set(t.map((j) => j.owner)).size).toBeGreaterThan(4);
  });

  it("declares every job a limit above what it runs, within the team's overestimate (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), (seed) => {
        for (const j of generateTrace({ ...opts, seed, durationS: 20 })) {
          const team = DEFAULT_TEAMS.find((t) => t.name === j.team)!;
          const over = j.maxRuntimeSeconds / (j.runtimeMs / 1000);
          expect(j.maxRuntimeSeconds).toBeGreaterThanOrEqual(Math.ceil(j.runtimeMs / 1000));
          expect(over).toBeGreaterThanOrEqual(team.overestimate.min - 1e-9);
          expect(j.maxRuntimeSeconds).toBeLessThanOrEqual(Math.ceil((j.runtimeMs / 1000) * team.overestimate.max));
        }
      }),
      { numRuns: 30 },
    );
  });

  it('starts and stops a team at its startS and endS', () => {
    const teams: TeamSpec[] = [{ ...DEFAULT_TEAMS[3], startS: 100, endS: 200 }];
    const t = generateTrace({ ...opts, teams });
    expect(t.length).toBeGreaterThan(0);
    expect(t.every((j) => j.submitAtMs >= 100_000 && j.submitAtMs < 200_000)).toBe(true);
  });
});

describe('drawRuntimeMs', () => {
  const runtime = { medianS: 20, sigma: 1, minS: 2, maxS: 240 };
  const draws = (() => {
    const rnd = seededRandom(7);
    return Array.from({ length: 20_000 }, () => drawRuntimeMs(rnd, runtime) / 1000).sort((a, b) => a - b);
  })();

  it('is log-normal around its median, heavy on the right', () => {
    expect(draws[10_000]).toBeGreaterThan(18.5);
    expect(draws[10_000]).toBeLessThan(21.5);
    // e^(σ·1.2816) × median at the 90th percentile: 72 s.
    expect(draws[18_000]).toBeGreaterThan(65);
    expect(draws[18_000]).toBeLessThan(80);
    const mean = draws.reduce((s, x) => s + x, 0) / draws.length;
    expect(mean).toBeGreaterThan(1.4 * draws[10_000]);
  });

  it('stays within [minS, maxS]', () => {
    expect(draws[0]).toBeGreaterThanOrEqual(2);
    expect(draws[draws.length - 1]).toBeLessThanOrEqual(240);
  });
});
