import { ExecutionSpec } from './executor';
import { NODE_IDS_ENV_MAX_BYTES, jobEnvironment } from './job-environment';

const spec = (over: Partial<ExecutionSpec> = {}): ExecutionSpec => ({
  nodeId: 'gpu-b',
  jobId: 'job-1',
  attempt: 2,
  image: 'none',
  command: ['true'],
  env: { EPOCHS: '3' },
  gang: { size: 2, rank: 1, nodeIds: ['gpu-a', 'gpu-b'], masterAddr: '10.0.0.1', masterPort: 29504 },
  gpuIndices: [4, 5, 6, 7],
  owner: 'alice',
  hostIpc: false,
  ...over,
});
const agent = { path: '/bin', home: '/home/agent', nodeIdsPath: '/work/job-1-2.nodes' };

describe('jobEnvironment', () => {
  it('gives a gang rank everything torchrun and NCCL need, and its devices', () => {
    expect(jobEnvironment(spec(), agent)).toEqual({
      env: {
        PATH: '/bin',
        HOME: '/home/agent',
        EPOCHS: '3',
        RANK: '1',
        WORLD_SIZE: '2',
        LOCAL_RANK: '0',
        MASTER_ADDR: '10.0.0.1',
        MASTER_PORT: '29504',
        GANTRY_JOB_ID: 'job-1',
        GANTRY_ATTEMPT: '2',
        GANTRY_NODE_ID: 'gpu-b',
        GANTRY_NODE_IDS: 'gpu-a,gpu-b',
        GANTRY_GANG_SIZE: '2',
        GANTRY_GANG_RANK: '1',
        GANTRY_GANG_NODES: 'gpu-a,gpu-b',
        CUDA_VISIBLE_DEVICES: '4,5,6,7',
        NVIDIA_VISIBLE_DEVICES: '4,5,6,7',
        CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      },
      nodeIdsFile: null,
    });
  });

  it.each<[string, Partial<ExecutionSpec>, Record<string, string | undefined>]>([
    ['a job without GPUs sees none', { gpuIndices: [] }, { CUDA_VISIBLE_DEVICES: '', NVIDIA_VISIBLE_DEVICES: 'none', CUDA_DEVICE_ORDER: 'PCI_BUS_ID' }],
    [
      'a RUN that names no devices leaves the variables alone',
      { gpuIndices: undefined },
      { CUDA_VISIBLE_DEVICES: undefined, NVIDIA_VISIBLE_DEVICES: undefined, CUDA_DEVICE_ORDER: undefined },
    ],
    [
      "Gantry's variables win over the job's",
      { env: { CUDA_VISIBLE_DEVICES: '0,1,2,3,4,5,6,7', CUDA_DEVICE_ORDER: 'FASTEST_FIRST', RANK: '9', MASTER_ADDR: 'x' } },
      { CUDA_VISIBLE_DEVICES: '4,5,6,7', CUDA_DEVICE_ORDER: 'PCI_BUS_ID', RANK: '1', MASTER_ADDR: '10.0.0.1' },
    ],
    [
      "no master address in the RUN: rank 0's node id",
      { gang: { size: 2, rank: 1, nodeIds: ['gpu-a', 'gpu-b'] } },
      { MASTER_ADDR: 'gpu-a', MASTER_PORT: '29500' },
    ],
    ["an array's child gets its index", { arrayIndex: 0 }, { GANTRY_ARRAY_INDEX: '0' }],
    ['a job that sets GANTRY_ARRAY_INDEX itself outside an array does not keep it', { env: { GANTRY_ARRAY_INDEX: '5' } }, { GANTRY_ARRAY_INDEX: undefined }],
    ["the index wins over the job's own", { env: { GANTRY_ARRAY_INDEX: '5' }, arrayIndex: 2 }, { GANTRY_ARRAY_INDEX: '2' }],
    [
      'a single job is a gang of one',
      { gang: { size: 1, rank: 0, nodeIds: ['gpu-b'], masterAddr: '10.0.0.2', masterPort: 29500 } },
      { RANK: '0', WORLD_SIZE: '1', MASTER_ADDR: '10.0.0.2', GANTRY_NODE_IDS: 'gpu-b' },
    ],
  ])('%s', (_n, over, expected) => {
    const { env } = jobEnvironment(spec(over), agent);
    for (const [k, v] of Object.entries(expected)) expect([k, env[k]]).toEqual([k, v]);
  });

  it('puts the node ids of a gang too large for one variable in a file instead', () => {
    const nodeIds = Array.from({ length: 1024 }, (_, i) => `${'n'.repeat(240)}-${String(i).padStart(4, '0')}`);
    expect(nodeIds.join(',').length).toBeGreaterThan(NODE_IDS_ENV_MAX_BYTES);
    const { env, nodeIdsFile } = jobEnvironment(spec({ gang: { size: 1024, rank: 7, nodeIds } }), agent);
    expect([env.GANTRY_NODE_IDS, env.GANTRY_GANG_NODES, env.GANTRY_NODE_IDS_FILE]).toEqual([undefined, undefined, '/work/job-1-2.nodes']);
    expect(nodeIdsFile!.split('\n').slice(0, -1)).toEqual(nodeIds);
    expect(Object.values(env).every((v) => Buffer.byteLength(v) <= NODE_IDS_ENV_MAX_BYTES)).toBe(true);
  });

  it('keeps a 1,024-rank gang of 64-character ids in the variable', () => {
    const nodeIds = Array.from({ length: 1024 }, (_, i) => `${'n'.repeat(59)}-${String(i).padStart(4, '0')}`);
    expect(jobEnvironment(spec({ gang: { size: 1024, rank: 0, nodeIds } }), agent).nodeIdsFile).toBeNull();
  });
});
