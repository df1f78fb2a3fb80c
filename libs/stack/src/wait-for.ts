/** Polls `probe` until it returns a value other than undefined/false, or fails with `what` at the deadline. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  opts: { timeoutMs: number; intervalMs?: number; onTimeout?: () => string },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError: unknown = null;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      const extra = opts.onTimeout?.() ?? '';
      const why = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      throw new Error(`${what} did not happen within ${opts.timeoutMs} ms${why}${extra ? `\n${extra}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
}
