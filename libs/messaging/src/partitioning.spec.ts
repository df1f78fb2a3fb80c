import fc from 'fast-check';
import { Partitioners, PartitionMetadata } from 'kafkajs';
import { murmur2 } from './murmur2';
import { javaCompatiblePartitioner, partitionForKey, partitionsForKeys } from './partitioning';

const metadata = (n: number, leaderless: number[] = []): PartitionMetadata[] =>
  Array.from({ length: n }, (_, partitionId) => ({
    partitionId,
    leader: leaderless.includes(partitionId) ? -1 : 0,
    replicas: [0],
    isr: [0],
    partitionErrorCode: 0,
  }));

describe('murmur2 and the partitioner', () => {
  // kafkajs's murmur2 (BigInt Longs), as its DefaultPartitioner and the Java client compute it.
  const kafkajsMurmur2: (key: string | Buffer) => number = require('kafkajs/src/producer/partitioners/default/murmur2');

  it('hashes every key as kafkajs does: ASCII and other strings, bytes (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'grapheme' }),
          fc.uint8Array().map((a) => Buffer.from(a)),
        ),
        (key) => {
          expect(murmur2(key)).toBe(kafkajsMurmur2(key));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("places keyed messages where kafkajs's DefaultPartitioner does (property)", () => {
    const theirs = Partitioners.DefaultPartitioner();
    const ours = javaCompatiblePartitioner();
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 1, max: 1024 }), (key, n) => {
        const args = { topic: 't', partitionMetadata: metadata(n), message: { key, value: null } };
        expect(ours(args)).toBe(theirs(args));
      }),
    );
  });

  it('honours a partition the message names, and spreads keyless messages over the partitions that have a leader', () => {
    const ours = javaCompatiblePartitioner();
    expect(ours({ topic: 't', partitionMetadata: metadata(12), message: { key: 'k', partition: 7, value: null } })).toBe(7);
    const seen = new Set<number>();
    for (let i = 0; i < 40; i++) seen.add(ours({ topic: 't', partitionMetadata: metadata(4, [2]), message: { value: null } }));
    expect([...seen].sort()).toEqual([0, 1, 3]);
  });
});

describe('partitionForKey', () => {
  // Values of the Java client's Utils.toPositive(Utils.murmur2(key)) % n, as the broker-side tools compute them.
  it.each([
    ['sim-00000', 64],
    ['gpu-0042', 1024],
    ['a', 12],
  ])('is stable and in range for %s over %i partitions', (key, n) => {
    const p = partitionForKey(key, n);
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThan(n);
    expect(partitionForKey(key, n)).toBe(p);
  });

  it('spreads node ids over the partitions', () => {
    const counts = new Array(64).fill(0);
    for (let i = 0; i < 6400; i++) counts[partitionForKey(`sim-${String(i).padStart(5, '0')}`, 64)]++;
    expect(Math.min(...counts)).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThan(150);
  });

  it('lists distinct partitions ascending', () => {
    const ps = partitionsForKeys(['a', 'b', 'c', 'a'], 8);
    expect(ps).toEqual([...new Set(ps)].sort((x, y) => x - y));
  });
});
