import { PartitionProgress } from './partition-progress';

describe('PartitionProgress', () => {
  let now = 0;
  const progress = () => new PartitionProgress('g', 't', 30_000, () => now);

  beforeEach(() => (now = 1_000_000));

  it('is not stalled while caught up, however long nothing arrives', () => {
    const p = progress();
    p.assigned([0]);
    p.batchStarted(0, 10n, 11n);
    p.advanced(0, 11n);
    now += 600_000;
    expect(p.stalled()).toBeNull();
  });

  it('is stalled when a partition with lag has not advanced for the stall time, naming it', () => {
    const p = progress();
    p.assigned([0, 3]);
    p.batchStarted(3, 100n, 250n);
    now += 29_999;
    expect(p.stalled()).toBeNull();
    now += 1;
    expect(p.stalled()).toBe('partition t/3 has not advanced for 30 s with 150 messages behind it');
    p.advanced(3, 120n);
    expect(p.stalled()).toBeNull();
  });

  it('starts the clock when work appears on a caught-up partition, not when it last moved', () => {
    const p = progress();
    p.assigned([1]);
    p.batchStarted(1, 0n, 5n);
    p.advanced(1, 5n);
    now += 120_000; // idle
    p.batchStarted(1, 5n, 6n);
    now += 10_000;
    expect(p.stuckFor().get(1)).toBe(10_000);
  });

  it('forgets partitions that moved to another member', () => {
    const p = progress();
    p.assigned([0]);
    p.batchStarted(0, 0n, 10n);
    now += 60_000;
    p.assigned([1]);
    expect(p.stalled()).toBeNull();
  });
});
