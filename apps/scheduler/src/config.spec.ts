import { loadConfig } from '@gantry/platform';
import { SchedulerEnv } from './config';

describe('SchedulerEnv', () => {
  it.each<[string, Record<string, string>, string]>([
    ['runtime backfill by default', {}, 'runtime'],
    ['strict on request', { GANTRY_SCHEDULER_BACKFILL: 'strict' }, 'strict'],
    ['runtime on request', { GANTRY_SCHEDULER_BACKFILL: 'runtime' }, 'runtime'],
  ])('GANTRY_SCHEDULER_BACKFILL: %s', (_n, env, mode) => expect(loadConfig(SchedulerEnv, env).GANTRY_SCHEDULER_BACKFILL).toBe(mode));

  it.each(['STRICT', 'greedy', 'runtime,strict'])('refuses GANTRY_SCHEDULER_BACKFILL=%j, naming it', (value) => {
    expect(() => loadConfig(SchedulerEnv, { GANTRY_SCHEDULER_BACKFILL: value })).toThrow('GANTRY_SCHEDULER_BACKFILL');
  });
});
