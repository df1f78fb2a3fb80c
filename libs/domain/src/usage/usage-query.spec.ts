import { MAX_USAGE_BUCKETS, checkUsageQuery } from './usage-query';

describe('checkUsageQuery', () => {
  it.each([
    [
      { from: '2026-01-01', to: '2026-02-01' },
      { fromMs: Date.UTC(2026, 0, 1), toMs: Date.UTC(2026, 1, 1), granularity: 'day', groupBy: [] },
    ],
    [
      { from: '2026-01-01T10:00:00Z', to: '2026-01-01T12:00:00.000+01:00', granularity: 'hour', groupBy: 'queue,owner' },
      { fromMs: Date.UTC(2026, 0, 1, 10), toMs: Date.UTC(2026, 0, 1, 11), granularity: 'hour', groupBy: ['queue', 'owner'] },
    ],
    [
      { from: '2025-01-01', to: '2026-01-01', granularity: 'month', groupBy: 'gpuModel' },
      { fromMs: Date.UTC(2025, 0, 1), toMs: Date.UTC(2026, 0, 1), granularity: 'month', groupBy: ['gpuModel'] },
    ],
  ])('accepts %j', (raw, range) => expect(checkUsageQuery(raw)).toEqual({ ok: true, range }));

  it.each([
    [{ to: '2026-01-01' }, /from is required/],
    [{ from: '2026-01-01' }, /to is required/],
    [{ from: 'yesterday', to: '2026-01-01' }, /from must be an ISO 8601/],
    [{ from: '2026-01-01T10:00:00', to: '2026-01-02' }, /with a zone/],
    [{ from: '2026-02-30', to: '2026-03-02' }, /from is not a valid date/],
    [{ from: '2026-13-01', to: '2027-01-01' }, /not a valid date/],
    [{ from: '2026-01-01T10:30:00Z', to: '2026-01-02' }, /whole UTC hour/],
    [{ from: '2026-01-01T10:00:00+05:30', to: '2026-01-02' }, /whole UTC hour/],
    [{ from: '2026-01-02', to: '2026-01-02' }, /from must be before to/],
    [{ from: '2026-01-03', to: '2026-01-02' }, /from must be before to/],
    [{ from: '2026-01-01', to: '2026-01-02', granularity: 'week' }, /granularity must be one of hour, day, month/],
    [{ from: '2026-01-01', to: '2026-01-02', groupBy: 'owner,team' }, /groupBy takes owner, queue, gpuModel; not "team"/],
    [{ from: '2026-01-01', to: '2026-01-02', groupBy: 'owner,' }, /not ""/],
    [{ from: '2026-01-01', to: '2026-01-02', groupBy: 'owner,owner' }, /twice/],
    [{ from: '2020-01-01', to: '2026-01-01', granularity: 'hour' }, new RegExp(`more than ${MAX_USAGE_BUCKETS} hour buckets`)],
    [{ from: '0001-01-01', to: '9999-01-01', granularity: 'month' }, /more than .* month buckets/],
  ])('refuses %j', (raw, problem) => {
    const check = checkUsageQuery(raw);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.problem).toMatch(problem);
  });
});
