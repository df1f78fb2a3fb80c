import { HeartbeatMessage } from './heartbeat.message';
import { isNewerBeat, newestBeatPerNode } from './heartbeat-order';

const beat = (over: Partial<HeartbeatMessage> = {}): HeartbeatMessage =>
  ({ nodeId: 'n', bootId: 'b', seq: 1, sentAt: 10, zone: 'z', rack: 'r', gpus: [], cpu: { cores: 8, utilization: 0 }, memory: { totalMiB: 64, usedMiB: 0 }, running: [], ...over }) as HeartbeatMessage;

describe('isNewerBeat', () => {
  it.each([
    [beat({ seq: 2 }), beat({ seq: 1 }), true],
    [beat({ seq: 1 }), beat({ seq: 2 }), false],
    [beat({ seq: 1 }), beat({ seq: 1 }), false],
    [beat({ bootId: 'b2', seq: 1, sentAt: 20 }), beat({ bootId: 'b', seq: 50, sentAt: 10 }), true],
    [beat({ bootId: 'b2', seq: 99, sentAt: 5 }), beat({ bootId: 'b', seq: 1, sentAt: 10 }), false],
  ])('case %#', (a, b, expected) => expect(isNewerBeat(a, b)).toBe(expected));
});

describe('newestBeatPerNode', () => {
  it('keeps the newest beat of each node whatever the order', () => {
    const newest = newestBeatPerNode([beat({ seq: 9 }), beat({ seq: 7 }), beat({ nodeId: 'm', seq: 2 }), beat({ seq: 8 })]);
    expect([...newest].map(([id, b]) => [id, b.seq])).toEqual([['n', 9], ['m', 2]]);
  });
});
