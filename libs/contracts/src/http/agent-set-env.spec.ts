import { agentSetEnvNames, containerUnsafeEnvNames, isAgentSetEnvName } from './agent-set-env';

describe('isAgentSetEnvName', () => {
  it.each<[string, boolean]>([
    ['CUDA_VISIBLE_DEVICES', true],
    ['NVIDIA_VISIBLE_DEVICES', true],
    ['RANK', true],
    ['WORLD_SIZE', true],
    ['LOCAL_RANK', true],
    ['MASTER_ADDR', true],
    ['MASTER_PORT', true],
    ['GANTRY_JOB_ID', true],
    ['GANTRY_', true],
    ['GANTRY_ANYTHING_NEW', true],
    ['gantry_job_id', false],
    ['MY_RANK', false],
    ['RANKS', false],
    ['CUDA_DEVICE_ORDER', false],
    ['PATH', false],
  ])('%s -> %p', (name, set) => {
    expect(isAgentSetEnvName(name)).toBe(set);
  });

  it('lists the names of an env that the agent sets', () => {
    expect(agentSetEnvNames({ A: '1', RANK: '3', GANTRY_X: 'y' })).toEqual(['RANK', 'GANTRY_X']);
    expect(agentSetEnvNames({})).toEqual([]);
  });
});

describe('containerUnsafeEnvNames', () => {
  it.each<[Record<string, string>, string[]]>([
    [{ A: 'one line', B: '' }, []],
    [{ A: 'two\nlines', B: 'ok', C: 'cr\r' }, ['A', 'C']],
  ])('%p -> %p', (env, names) => {
    expect(containerUnsafeEnvNames(env)).toEqual(names);
  });
});
