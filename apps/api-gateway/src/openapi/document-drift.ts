import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The document as it is checked in: two-space JSON and a final newline, so diffs stay readable. */
export function serializeDocument(doc: unknown): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/**
 * A unified diff of two texts (checked in vs. generated), at most `maxLines` lines of it, for a
 * failure message; null when they are equal.
 */
export function describeDrift(expected: string, actual: string, labels: [string, string], maxLines = 80): string | null {
  if (expected === actual) return null;
  const dir = mkdtempSync(join(tmpdir(), 'gantry-drift-'));
  try {
    const [a, b] = [join(dir, 'expected'), join(dir, 'actual')];
    writeFileSync(a, expected);
    writeFileSync(b, actual);
    const out = spawnSync('diff', ['-u', '--label', labels[0], '--label', labels[1], a, b], { encoding: 'utf8' });
    const lines = (out.stdout || firstDifference(expected, actual)).split('\n');
    return lines.length > maxLines ? [...lines.slice(0, maxLines), `… ${lines.length - maxLines} more lines`].join('\n') : lines.join('\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The `--check` of a generated, checked-in file: true when `path` (relative to the working directory)
 * holds exactly `generated`; otherwise prints the diff and the command that rewrites it, and false.
 */
export function checkGenerated(path: string, generated: string, source: string, writer: string): boolean {
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    // absent: every line differs
  }
  const drift = describeDrift(current, generated, [`${path} (checked in)`, `generated from ${source}`]);
  if (drift) {
    console.error(`${path} differs from what ${source} generates; run \`${writer}\` and commit it.\n${drift}`);
    return false;
  }
  console.log(`${path} matches ${source}`);
  return true;
}

function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  const i = x.findIndex((line, n) => line !== y[n]);
  const at = i === -1 ? x.length : i;
  return `first difference at line ${at + 1}:\n- ${x[at] ?? '(end)'}\n+ ${y[at] ?? '(end)'}`;
}
