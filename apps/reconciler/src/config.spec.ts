import { loadConfig } from '@gantry/platform';
import { ReconcilerEnv } from './config';

describe('ReconcilerEnv', () => {
  it.each([
    ['the defaults', {}, [5000, 15000, 10000, 2000]],
    [
      'slow heartbeats: the phantom grace, the stall and the detector round follow',
      { GANTRY_HEARTBEAT_MS: '20000', GANTRY_NODE_SUSPECT_MS: '60000', GANTRY_NODE_DEAD_MS: '120000' },
      [20000, 60000, 40000, 6000],
    ],
    ['fast heartbeats: never below 15 s, 10 s and 2 s', { GANTRY_NODE_SUSPECT_MS: '2000', GANTRY_NODE_DEAD_MS: '5000' }, [667, 15000, 10000, 2000]],
    [
      'values set explicitly are kept',
      {
        GANTRY_HEARTBEAT_MS: '20000',
        GANTRY_NODE_SUSPECT_MS: '60000',
        GANTRY_NODE_DEAD_MS: '120000',
        GANTRY_PHANTOM_GRACE_MS: '3000',
        GANTRY_INGEST_STALL_MS: '3000',
        GANTRY_DETECTOR_INTERVAL_MS: '500',
      },
      [20000, 3000, 3000, 500],
    ],
  ])('%s', (_n, env, [heartbeat, phantom, stall, detector]) => {
    const c = loadConfig(ReconcilerEnv, env);
    expect([c.GANTRY_HEARTBEAT_MS, c.GANTRY_PHANTOM_GRACE_MS, c.GANTRY_INGEST_STALL_MS, c.GANTRY_DETECTOR_INTERVAL_MS]).toEqual([
      heartbeat,
      phantom,
      stall,
      detector,
    ]);
  });

  it.each([
    ['the defaults', {}, []],
    ['a start timeout of two heartbeat periods', { GANTRY_HEARTBEAT_MS: '1000', GANTRY_START_TIMEOUT_MS: '2000' }, []],
    [
      'one shorter than two periods names both variables',
      { GANTRY_HEARTBEAT_MS: '1000', GANTRY_START_TIMEOUT_MS: '1999' },
      ['GANTRY_START_TIMEOUT_MS=1999 must be at least twice GANTRY_HEARTBEAT_MS=1000'],
    ],
  ])('start timeout: %s', (_n, env, problems) => {
    const run = () => loadConfig(ReconcilerEnv, env);
    if (problems.length === 0) expect(run).not.toThrow();
    else for (const p of problems) expect(run).toThrow(p);
  });

  it.each([
    ['a fractional half-life', { GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '0.5' }, null],
    ['a half-life of zero', { GANTRY_FAIRSHARE_HALF_LIFE_HOURS: '0' }, 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS'],
    ['a half-life that is not a number', { GANTRY_FAIRSHARE_HALF_LIFE_HOURS: 'week' }, 'GANTRY_FAIRSHARE_HALF_LIFE_HOURS'],
    ['a fold period too short', { GANTRY_USAGE_FOLD_MS: '10' }, 'GANTRY_USAGE_FOLD_MS'],
  ])('usage ledger: %s', (_n, env, problem) => {
    const run = () => loadConfig(ReconcilerEnv, env);
    if (problem === null) expect(run().GANTRY_FAIRSHARE_HALF_LIFE_HOURS).toBe(0.5);
    else expect(run).toThrow(problem);
  });
});
