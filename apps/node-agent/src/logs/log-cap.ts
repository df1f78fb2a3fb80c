import { open } from 'node:fs/promises';

const CHUNK = 1024 * 1024;
/** A cut is moved to just after the first newline within this many bytes, so the kept log starts on a whole line. */
const LINE_SEARCH = 64 * 1024;

/**
 * Keeps the newest bytes of a log that has grown past `maxBytes`: when it is over, the newest
 * `keepBytes` (from the first line start at or after the cut) are copied to the front of the same
 * file in chunks, and the file is truncated after them. Returns how many bytes were dropped.
 *
 * The job writes to the file directly (O_APPEND, through the executor's stream), so the agent
 * cannot rotate it under the writer. The copy reads up to the current end again and again, and only
 * the bytes appended between its last read and the truncate (microseconds) are lost: the race
 * ADR 0021 accepts. The file stays the same inode, so open readers keep reading it.
 */
export async function capLog(path: string, maxBytes: number, keepBytes = Math.floor((maxBytes * 3) / 4)): Promise<number> {
  let fh;
  try {
    fh = await open(path, 'r+');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    if (size <= maxBytes) return 0;
    let src = size - keepBytes;
    const buf = Buffer.allocUnsafe(CHUNK);
    // From the byte before the cut: a newline there means the cut is already at a line start.
    const head = await fh.read(buf, 0, Math.min(LINE_SEARCH, CHUNK), src - 1);
    const newline = buf.subarray(0, head.bytesRead).indexOf(0x0a);
    if (newline >= 0 && src + newline < size) src += newline;
    const dropped = src;
    let dst = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, CHUNK, src);
      if (bytesRead === 0) break;
      await fh.write(buf, 0, bytesRead, dst);
      src += bytesRead;
      dst += bytesRead;
    }
    await fh.truncate(dst);
    return dropped;
  } finally {
    await fh.close();
  }
}
