import { readSse } from '@gantry/client';

/** Opens an SSE stream by hand (the test decides when to drop it) and returns the messages read. */
export async function readStream(
  url: string,
  token: string,
  opts: { lastEventId?: string; stopAfter?: number; timeoutMs?: number } = {},
): Promise<{ messages: Array<{ id: string | undefined; data: any }>; ended: boolean; status: number }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), opts.timeoutMs ?? 30_000);
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'text/event-stream' };
  if (opts.lastEventId !== undefined) headers['last-event-id'] = opts.lastEventId;
  const messages: Array<{ id: string | undefined; data: any }> = [];
  try {
    const res = await fetch(url, { headers, signal: abort.signal });
    if (!res.ok) return { messages, ended: true, status: res.status };
    for await (const m of readSse(res.body!)) {
      messages.push({ id: m.id, data: JSON.parse(m.data) });
      if (opts.stopAfter !== undefined && messages.length >= opts.stopAfter) {
        abort.abort(); // drop the connection mid-stream
        return { messages, ended: false, status: res.status };
      }
    }
    return { messages, ended: true, status: res.status };
  } finally {
    clearTimeout(timer);
  }
}
