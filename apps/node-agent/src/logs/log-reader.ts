import type { FileHandle } from 'node:fs/promises';

const CHUNK = 64 * 1024;

/**
 * Where the last `lines` lines of a file of `size` bytes start: read backwards a chunk at a time
 * (memory: one chunk), so the cost is what is sent, not the file. A final newline ends the last
 * line rather than starting an empty one.
 */
export async function tailOffset(fh: FileHandle, size: number, lines: number): Promise<number> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let end = size;
  let seen = 0;
  let first = true;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    const { bytesRead } = await fh.read(buf, 0, end - start, start);
    for (let i = bytesRead - 1; i >= 0; i--) {
      if (buf[i] !== 0x0a) continue;
      if (first && start + i === size - 1) continue;
      if (++seen === lines) return start + i + 1;
    }
    first = false;
    end = start;
  }
  return 0;
}
