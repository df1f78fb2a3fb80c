import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capLog } from './log-cap';
import { tailOffset } from './log-reader';

const dir = mkdtempSync(join(tmpdir(), 'gantry-log-cap-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line-${String(from + i).padStart(5, '0')}\n`).join('');

describe('capLog (real files)', () => {
  it.each<[string, string, number, number | undefined, string]>([
    ['under the cap: untouched', lines(1, 10), 1000, undefined, lines(1, 10)],
    ['exactly at the cap: untouched', lines(1, 10), 110, undefined, lines(1, 10)],
    // 100 lines of 11 bytes over a 550-byte cap: the newest 412 bytes (3/4), moved on to a line start: 37 lines.
    ['over the cap: the newest three quarters, from a line start', lines(1, 100), 550, undefined, lines(64, 100)],
    ['an explicit keep', lines(1, 100), 550, 110, lines(91, 100)],
  ])('%s', async (_name, content, max, keep, expected) => {
    const path = join(dir, `${_name.replace(/\W/g, '')}.log`);
    writeFileSync(path, content);
    const dropped = await capLog(path, max, keep);
    expect(readFileSync(path, 'utf8')).toBe(expected);
    expect(dropped).toBe(content.length - expected.length);
  });

  it('keeps what is appended after the cut (a writer with O_APPEND writes on at the new end)', async () => {
    const path = join(dir, 'append.log');
    writeFileSync(path, lines(1, 100));
    await capLog(path, 550, 110);
    appendFileSync(path, lines(101, 102));
    expect(readFileSync(path, 'utf8')).toBe(lines(91, 102));
  });

  it('copies a log larger than its buffer (several chunks) and keeps a reader open on the same file', async () => {
    const path = join(dir, 'big.log');
    const content = lines(0, 99_999); // 1.1 MB: more than one 1 MiB chunk to move
    writeFileSync(path, content);
    const reader = await open(path, 'r');
    try {
      const dropped = await capLog(path, 1_000_000, 900_000);
      const kept = readFileSync(path, 'utf8');
      expect(kept.length).toBeLessThanOrEqual(900_000);
      expect(kept).toBe(content.slice(dropped));
      expect(kept.startsWith('line-')).toBe(true);
      expect(statSync(path).size).toBe(kept.length);
      const buf = Buffer.alloc(11);
      await reader.read(buf, 0, 11, 0);
      expect(buf.toString()).toBe(kept.slice(0, 11));
    } finally {
      await reader.close();
    }
  });

  it('is a no-op for a log that does not exist', async () => {
    expect(await capLog(join(dir, 'missing.log'), 10)).toBe(0);
  });
});

describe('tailOffset', () => {
  it.each<[string, string, number, string]>([
    ['the last lines', 'a\nb\nc\n', 2, 'b\nc\n'],
    ['more lines than there are', 'a\nb\n', 5, 'a\nb\n'],
    ['a last line without newline', 'a\nb\nc', 1, 'c'],
    ['one line', 'a\nb\n', 1, 'b\n'],
    ['an empty file', '', 3, ''],
  ])('%s', async (_name, content, n, expected) => {
    const path = join(dir, `tail-${_name.replace(/\W/g, '')}.log`);
    writeFileSync(path, content);
    const fh = await open(path, 'r');
    try {
      expect(content.slice(await tailOffset(fh, content.length, n))).toBe(expected);
    } finally {
      await fh.close();
    }
  });

  it('finds lines across chunk boundaries (a log of 200,000 lines)', async () => {
    const path = join(dir, 'tail-big.log');
    const content = lines(0, 199_999);
    writeFileSync(path, content);
    const fh = await open(path, 'r');
    try {
      expect(content.slice(await tailOffset(fh, content.length, 10_000))).toBe(lines(190_000, 199_999));
    } finally {
      await fh.close();
    }
  });
});
