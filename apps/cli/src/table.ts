/** A column of a table: its header, and whether it may be cut to fit (ids and names stay whole). */
export interface Column<T> {
  header: string;
  value: (row: T) => string;
  /** May be shortened with an ellipsis when the table is wider than the terminal. */
  shrink?: boolean;
  /** May be left out when even shortened columns do not fit (the last such column goes first). */
  optional?: boolean;
}

const GAP = 2;
const MIN_SHRUNK = 6;

/**
 * Renders rows as aligned columns no wider than `width`: when too wide, the shrinkable columns
 * give up characters, widest first (each keeps at least a few), and their cells end in "…"; if that
 * is not enough, optional columns are left out, last first. Past that the terminal wraps.
 */
export function renderTable<T>(rows: T[], columns: Column<T>[], width: number): string {
  for (;;) {
    const table = tryRender(rows, columns, width);
    const drop = columns.map((c) => c.optional).lastIndexOf(true);
    if (table.fits || drop < 0) return table.text;
    columns = columns.filter((_, i) => i !== drop);
  }
}

function tryRender<T>(rows: T[], columns: Column<T>[], width: number): { text: string; fits: boolean } {
  const cells = rows.map((r) => columns.map((c) => oneLine(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i].length)));
  let excess = widths.reduce((a, b) => a + b, 0) + GAP * (columns.length - 1) - width;
  while (excess > 0) {
    let widest = -1;
    columns.forEach((c, i) => {
      if (c.shrink && widths[i] > MIN_SHRUNK && (widest < 0 || widths[i] > widths[widest])) widest = i;
    });
    if (widest < 0) break; // nothing left to shrink
    widths[widest]--;
    excess--;
  }
  const line = (values: string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? fit(v, widths[i]) : fit(v, widths[i]).padEnd(widths[i])))
      .join(' '.repeat(GAP))
      .trimEnd();
  return { text: [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n'), fits: excess <= 0 };
}

function fit(v: string, width: number): string {
  return v.length <= width ? v : `${v.slice(0, Math.max(0, width - 1))}…`;
}

function oneLine(v: string): string {
  return v.replace(/[\r\n\t]+/g, ' ');
}

/** The width to fit: the terminal's, or COLUMNS, or unlimited when the output goes to a pipe. */
export function outputWidth(stream: NodeJS.WriteStream = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  if (stream.isTTY && stream.columns) return stream.columns;
  const columns = Number(env.COLUMNS);
  return Number.isInteger(columns) && columns > 0 ? columns : Number.POSITIVE_INFINITY;
}

/** "3m ago", "12s", for times in tables. */
export function age(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}
