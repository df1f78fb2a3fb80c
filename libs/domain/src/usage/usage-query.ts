import { USAGE_GRANULARITIES, UsageGranularity, nextBucketStart } from './usage-buckets';
import { USAGE_GROUP_KEYS, UsageGroupKey, UsageRange } from './usage-report';

/**
 * The most buckets one report may have (a leap year of hours): bounds its rows per group, and so
 * the work of a report, whatever range a client asks for.
 */
export const MAX_USAGE_BUCKETS = 8784;

const HOUR_MS = 3_600_000;
/** A date, or a date-time with a zone (Z or an offset): never a local time, whose meaning depends on the server. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/;

/** A usage query as it arrives (query-string values). */
export interface RawUsageQuery {
  from?: string;
  to?: string;
  groupBy?: string;
  granularity?: string;
}

export type UsageQueryCheck = { ok: true; range: UsageRange } | { ok: false; problem: string };

function parseTime(name: string, value: string | undefined): number | string {
  if (value === undefined || value === '') return `${name} is required (an ISO 8601 date or date-time with a zone)`;
  if (!DATE_TIME.test(value)) return `${name} must be an ISO 8601 date or date-time with a zone, like 2026-01-01 or 2026-01-01T10:00:00Z`;
  const ms = Date.parse(value);
  const [y, m, d] = value.slice(0, 10).split('-').map(Number);
  const day = new Date(0);
  day.setUTCFullYear(y, m - 1, d); // not Date.UTC: it reads years below 100 as 19xx
  // Date.parse rolls 2026-02-30 over into March: the calendar date must be itself.
  if (Number.isNaN(ms) || day.getUTCFullYear() !== y || day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) return `${name} is not a valid date`;
  // Whole hours only: the rollup is hourly, so every report is exact from it (ADR 0037).
  if (ms % HOUR_MS !== 0) return `${name} must be a whole UTC hour (minutes, seconds and milliseconds zero)`;
  return ms;
}

/**
 * Checks a usage query: `from` and `to` whole UTC hours with from < to, a known granularity
 * (default day), groupBy a comma list of distinct known keys (default none), and at most
 * MAX_USAGE_BUCKETS buckets. Returns the range or the first problem, worded for the caller.
 */
export function checkUsageQuery(raw: RawUsageQuery): UsageQueryCheck {
  const from = parseTime('from', raw.from);
  if (typeof from === 'string') return { ok: false, problem: from };
  const to = parseTime('to', raw.to);
  if (typeof to === 'string') return { ok: false, problem: to };
  if (from >= to) return { ok: false, problem: 'from must be before to' };
  const granularity = (raw.granularity ?? 'day') as UsageGranularity;
  if (!USAGE_GRANULARITIES.includes(granularity)) return { ok: false, problem: `granularity must be one of ${USAGE_GRANULARITIES.join(', ')}` };
  const groupBy = raw.groupBy === undefined || raw.groupBy === '' ? [] : raw.groupBy.split(',');
  for (const key of groupBy) {
    if (!USAGE_GROUP_KEYS.includes(key as UsageGroupKey))
      return { ok: false, problem: `groupBy takes ${USAGE_GROUP_KEYS.join(', ')}; not ${JSON.stringify(key)}` };
  }
  if (new Set(groupBy).size !== groupBy.length) return { ok: false, problem: 'groupBy names a key twice' };
  let buckets = 0;
  for (let t = from; t < to; t = nextBucketStart(t, granularity)) {
    if (++buckets > MAX_USAGE_BUCKETS) {
      return { ok: false, problem: `the range has more than ${MAX_USAGE_BUCKETS} ${granularity} buckets; ask for a shorter range or a coarser granularity` };
    }
  }
  return { ok: true, range: { fromMs: from, toMs: to, granularity, groupBy: groupBy as UsageGroupKey[] } };
}
