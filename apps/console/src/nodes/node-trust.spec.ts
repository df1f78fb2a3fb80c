import type { Node } from '@gantry/client';
import { cordonText, declaredText } from './node-trust';

describe('cordonText', () => {
  it.each<[string, boolean, Node['cordonReason'], string | null]>([
    ['not cordoned', false, null, null],
    ['start failures', true, 'START_FAILURES', 'start failures: it did not start its work in time, several times in a row'],
    ['a drain', true, 'DRAIN', 'drained'],
    ['an operator', true, 'OPERATOR', 'by an operator'],
    ['a cordon older than the reasons', true, null, 'reason unknown'],
  ])('%s', (_n, cordoned, cordonReason, text) => {
    expect(cordonText({ cordoned, cordonReason })).toBe(text);
  });
});

describe('declaredText', () => {
  it.each<[string, Node['declared'], string]>([
    ['nothing pinned', null, 'nothing pinned yet: the first inventory it reports will be'],
    [
      'GPUs and an address',
      { gpus: { model: 'H100', count: 8 }, cpuCores: 96, memoryMiB: 1_048_576, address: '10.0.4.2' },
      '8 × H100, 96 cores, 1.0 TiB, address 10.0.4.2',
    ],
    ['no GPUs, no address yet', { gpus: null, cpuCores: 4, memoryMiB: 512, address: null }, 'no GPUs, 4 cores, 512 MiB, address not pinned yet'],
  ])('%s', (_n, declared, text) => {
    expect(declaredText({ declared })).toBe(text);
  });
});
