import { waitsByTeam } from './waits';

describe('waitsByTeam', () => {
  it('measures submission to first placement, per team, with nearest-rank percentiles', () => {
    const waits = Array.from({ length: 100 }, (_, i) => ({ team: 'a', submitMs: 0, startMs: (i + 1) * 1000 }));
    const [a] = waitsByTeam(waits, 1_000_000);
    expect(a).toMatchObject({ team: 'a', jobs: 100, censored: 0, p50S: 50, p99S: 99 });
  });

  it('counts a job still waiting at the cut-off with the wait it had, and says so', () => {
    const got = waitsByTeam(
      [
        { team: 'b', submitMs: 0, startMs: null },
        { team: 'b', submitMs: 0, startMs: 20_000 },
        { team: 'b', submitMs: 5_000, startMs: 1_000 },
      ],
      10_000,
    );
    expect(got).toEqual([{ team: 'b', jobs: 3, censored: 2, p50S: 10, p99S: 10, meanS: 20 / 3 }]);
  });

  it('leaves out jobs submitted at or after the cut-off', () => {
    expect(waitsByTeam([{ team: 'c', submitMs: 10_000, startMs: 11_000 }], 10_000)).toEqual([]);
  });
});
