import { OutboxVacuumSchedule } from './outbox';

describe('OutboxVacuumSchedule', () => {
  it.each([
    // every rows, rows published per round, rounds after which a vacuum is due (1-based)
    [20, [10, 10, 10, 10, 10], [2, 4]],
    [20, [25, 5, 15], [1, 3]],
    [2000, [500, 500, 500, 500, 500], [4]],
    [0, [5000, 5000], []],
  ])('every %p rows, rounds of %p: due after rounds %p', (every, rounds, dueAfter) => {
    const schedule = new OutboxVacuumSchedule(every);
    expect(rounds.map((n, i) => (schedule.due(n) ? i + 1 : 0)).filter(Boolean)).toEqual(dueAfter);
  });
});
