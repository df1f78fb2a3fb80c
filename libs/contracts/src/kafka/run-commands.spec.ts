import { RunnableJob, buildRunCommand, runCommandsOf } from './run-commands';

const job = (over: Partial<RunnableJob> = {}): RunnableJob => ({
  id: '0b7e3f0a-58d4-4c1e-9a55-3f5a3c1d2e4f',
  owner: 'alice',
  image: 'img',
  command: ['true'],
  env: {},
  gpus: 2,
  gpuModel: 'H100',
  cpuCores: 1,
  memoryMiB: 1,
  gpuIndices: [4, 5, 0, 1],
  masterAddr: '10.0.0.1',
  maxRuntimeSeconds: null,
  ...over,
});
const nodes = ['gpu-a', 'gpu-b'];

describe('buildRunCommand', () => {
  it('gives each rank its own devices and every rank the same rendezvous', () => {
    const runs = [...runCommandsOf(job(), 3, nodes, 1)];
    expect(runs.map((r) => [r.nodeId, r.gpuIndices, r.gang.rank, r.gang.masterAddr, r.gang.masterPort])).toEqual([
      ['gpu-a', [4, 5], 0, '10.0.0.1', 29504],
      ['gpu-b', [0, 1], 1, '10.0.0.1', 29504],
    ]);
  });

  it.each<[string, Partial<RunnableJob>, Record<string, unknown>]>([
    ['a job without GPUs holds none', { gpus: 0, gpuIndices: [] }, { gpuIndices: [] }],
    ['an attempt placed before devices were assigned says nothing', { gpuIndices: [] }, { gpuIndices: undefined }],
    ["a node that never said its address: rank 0's node id", { masterAddr: null }, { masterAddr: 'gpu-a' }],
    ['a deadline travels with the RUN', { maxRuntimeSeconds: 2 }, { maxRuntimeSeconds: 2 }],
    ['no deadline, no field', { maxRuntimeSeconds: null }, { maxRuntimeSeconds: undefined }],
    ["an array's child says its index", { arrayIndex: 7 }, { arrayIndex: 7 }],
    ['index 0 is an index', { arrayIndex: 0 }, { arrayIndex: 0 }],
    ['any other job, no field', { arrayIndex: null }, { arrayIndex: undefined }],
    ['the owner travels with the RUN (the node keeps owners apart by uid)', {}, { owner: 'alice' }],
    ["a queue with the host's IPC says so", { hostIpc: true }, { hostIpc: true }],
    ['any other queue, no field', { hostIpc: false }, { hostIpc: undefined }],
  ])('%s', (_n, over, expected) => {
    const run = buildRunCommand(job(over), 1, nodes, 1, 1);
    const seen = {
      gpuIndices: run.gpuIndices,
      masterAddr: run.gang.masterAddr,
      maxRuntimeSeconds: run.maxRuntimeSeconds,
      arrayIndex: run.arrayIndex,
      owner: run.owner,
      hostIpc: run.hostIpc,
    };
    expect(seen).toMatchObject(expected);
    for (const [k, v] of Object.entries(expected))
      if (v === undefined) expect(k in run ? (run as unknown as Record<string, unknown>)[k] : undefined).toBeUndefined();
  });
});
