import { loadConfig } from '@gantry/platform';
import { SchedulerEnv } from './config';

describe('SchedulerEnv', () => {
  it.each<[string, Record<string, string>, string]>([
    ['strict backfill by default', {}, 'strict'],
    ['strict on request', { GANTRY_SCHEDULER_BACKFILL: 'strict' }, 'strict'],
    ['runtime on request', { GANTRY_SCHEDULER_BACKFILL: 'runtime' }, 'runtime'],
  ])('GANTRY_SCHEDULER_BACKFILL: %s', (_n, env, mode) => expect(loadConfig(SchedulerEnv, env).GANTRY_SCHEDULER_BACKFILL).toBe(mode));

  it.each(['STRICT', 'greedy', 'runtime,strict'])('refuses GANTRY_SCHEDULER_BACKFILL=%j, naming it', (value) => {
    expect(() => loadConfig(SchedulerEnv, { GANTRY_SCHEDULER_BACKFILL: value })).toThrow('GANTRY_SCHEDULER_BACKFILL');
  });
});

describe('SchedulerEnv: fair share', () => {
  it('defaults to decayed fair share with a week-long half-life', () => {
    const c = loadConfig(SchedulerEnv, {});
    expect([c.GANTRY_SCHEDULER_FAIRNESS, c.GANTRY_FAIRSHARE_HALF_LIFE_HOURS]).toEqual(['decayed', 168]);
  });

  it.each([
    [{ GANTRY_SCHEDULER_FAIRNESS: 'drf' }, 'drf', 168],
    [{ GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '0.05' }, 'decayed', 0.05],
  ])('takes %j', (env, fairness, halfLife) => {
    const c = loadConfig(SchedulerEnv, env);
    expect([c.GANTRY_SCHEDULER_FAIRNESS, c.GANTRY_FAIRSHARE_HALF_LIFE_HOURS]).toEqual([fairness, halfLife]);
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ GANTRY_SCHEDULER_FAIRNESS: 'fifo' }, /GANTRY_SCHEDULER_FAIRNESS must be decayed or drf/],
    [{ GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '0' }, /GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be more than 0/],
    [{ GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '-1' }, /GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be more than 0/],
    [{ GANTRY_FAIRSHARE_HALF_LIFE_HOURS: 'week' }, /GANTRY_FAIRSHARE_HALF_LIFE_HOURS must be a number of hours/],
  ])('refuses %j, naming the variable', (env, message) => {
    expect(() => loadConfig(SchedulerEnv, env)).toThrow(message);
  });
});
