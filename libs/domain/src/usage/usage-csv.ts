import { USAGE_GROUP_KEYS, UsageGroupKey } from './usage-report';
import { UsageRowView } from './usage-row-view';

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
function field(value: string | number | null | undefined): string {
  const s = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * The rows as CSV (RFC 4180): a header row, then one line per row, CRLF after every line; the
 * grouped-by columns come between start and the sums, in the order owner, queue, gpuModel.
 */
export function renderUsageCsv(rows: readonly UsageRowView[], groupBy: readonly UsageGroupKey[]): string {
  const keys = USAGE_GROUP_KEYS.filter((k) => groupBy.includes(k));
  const header = ['start', ...keys, 'gpuSeconds', 'cpuSeconds', 'attempts', 'jobs'];
  const lines = [header.join(',')];
  for (const r of rows) lines.push([r.start, ...keys.map((k) => r[k]), r.gpuSeconds, r.cpuSeconds, r.attempts, r.jobs].map(field).join(','));
  return lines.map((l) => `${l}\r\n`).join('');
}
