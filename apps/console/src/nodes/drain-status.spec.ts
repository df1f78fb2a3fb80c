import type { NodeEvent } from '@gantry/client';
import { DrainStatus, drainStatus } from './drain-status';

const ev = (type: string, at: string, more: Partial<NodeEvent> = {}) => ({ id: 0, nodeId: 'n', type, at, ...more }) as unknown as NodeEvent;
const drained = ev('DRAINED', 't2', { reason: 'NODE_DRAINED', jobIds: ['j1'] });

describe('drainStatus', () => {
  it.each<[string, { cordoned: boolean; drainDeadline: string | null }, NodeEvent[], DrainStatus]>([
    [
      'a pending drain: its deadline',
      { cordoned: true, drainDeadline: 't9' },
      [ev('CORDONED', 't1', { reason: 'DRAIN' })],
      { kind: 'draining', deadline: 't9' },
    ],
    [
      'done and still cordoned: when, and the jobs it ended',
      { cordoned: true, drainDeadline: null },
      [ev('CORDONED', 't1', { reason: 'DRAIN' }), drained],
      { kind: 'drained', at: 't2', jobIds: ['j1'] },
    ],
    ['done, then uncordoned: none', { cordoned: false, drainDeadline: null }, [drained, ev('UNCORDONED', 't3')], { kind: 'none' }],
    [
      'done, uncordoned, cordoned again by hand: none',
      { cordoned: true, drainDeadline: null },
      [drained, ev('UNCORDONED', 't3'), ev('CORDONED', 't4')],
      { kind: 'none' },
    ],
    ['a plain cordon: none', { cordoned: true, drainDeadline: null }, [ev('CORDONED', 't1')], { kind: 'none' }],
    [
      'a drain with no jobs ended',
      { cordoned: true, drainDeadline: null },
      [ev('DRAINED', 't2', { reason: 'NODE_DRAINED' })],
      { kind: 'drained', at: 't2', jobIds: [] },
    ],
  ])('%s', (_what, node, events, expected) => {
    expect(drainStatus(node, events)).toEqual(expected);
  });
});
