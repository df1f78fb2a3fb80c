import { validateTeams } from './config';
import { parsePolicies, policy } from './policies';
import { DEFAULT_TEAMS } from './trace';

const ok = () => structuredClone(DEFAULT_TEAMS) as unknown as Array<Record<string, unknown>>;

describe('validateTeams', () => {
  it('takes the default teams', () => {
    expect(validateTeams(ok(), 'default')).toHaveLength(4);
  });

  it.each([
    ['not a list', () => ({}), /non-empty JSON array/],
    ['an empty list', () => [], /non-empty JSON array/],
    ['a bad name', () => [{ ...ok()[0], name: 'Vision!' }], /team name/],
    ['a name twice', () => [ok()[0], ok()[0]], /team vision twice/],
    ['weight 0', () => [{ ...ok()[0], weight: 0 }], /vision: weight/],
    ['no owners', () => [{ ...ok()[0], owners: 0 }], /vision: owners/],
    ['a negative load', () => [{ ...ok()[0], load: -1 }], /vision: load/],
    ['no shapes', () => [{ ...ok()[0], shapes: [] }], /vision: shapes/],
    ['9 GPUs a node', () => [{ ...ok()[0], shapes: [[{ gpus: 9, nodes: 1 }, 1]] }], /gpus 1\.\.8 per node/],
    ['a gang of partial nodes', () => [{ ...ok()[0], shapes: [[{ gpus: 4, nodes: 2 }, 1]] }], /whole 8-GPU nodes/],
    ['min above max runtime', () => [{ ...ok()[0], runtime: { medianS: 10, sigma: 1, minS: 50, maxS: 10 } }], /minS above/],
    ['an underestimate', () => [{ ...ok()[0], overestimate: { min: 0.5, max: 2 } }], /overestimate/],
  ])('refuses %s, naming the variable', (_what, teams, message) => {
    expect(() => validateTeams(teams(), 'teams.json')).toThrow(/^BENCH_FAIRNESS_TEAMS \(teams\.json\): /);
    expect(() => validateTeams(teams(), 'teams.json')).toThrow(message);
  });
});

describe('policies', () => {
  it.each([
    ['previous', { GANTRY_SCHEDULER_FAIRNESS: 'drf', GANTRY_SCHEDULER_BACKFILL: 'strict' }, false],
    ['new', { GANTRY_SCHEDULER_FAIRNESS: 'decayed', GANTRY_SCHEDULER_BACKFILL: 'runtime', GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '0.02' }, true],
    ['new-strict', { GANTRY_SCHEDULER_FAIRNESS: 'decayed', GANTRY_SCHEDULER_BACKFILL: 'strict', GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '0.02' }, true],
  ] as const)("%s sets the services' env", (name, env, newQueues) => {
    expect(policy(name, 0.02)).toEqual({ name, env, newQueues });
  });

  it('parses a list and refuses an unknown or empty one', () => {
    expect(parsePolicies(' previous, new ')).toEqual(['previous', 'new']);
    expect(() => parsePolicies('previous,fifo')).toThrow(/^BENCH_FAIRNESS_POLICIES: unknown policy fifo/);
    expect(() => parsePolicies(' , ')).toThrow(/^BENCH_FAIRNESS_POLICIES: name at least one/);
  });
});
