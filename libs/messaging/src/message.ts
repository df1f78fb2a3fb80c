/** A message to send: key (the partitioning key: nodeId for the agent protocol), value, headers. */
export interface OutgoingMessage {
  key: string | null;
  value: string | Buffer;
  headers?: Record<string, string>;
}

export interface TopicMessages {
  topic: string;
  messages: OutgoingMessage[];
}

/** A consumed message's headers, decoded as UTF-8 (the first value where a header is repeated). */
export type MessageHeaders = Record<string, string>;

/** Bytes a message takes on the wire, near enough to keep requests under the broker's limits. */
export function messageBytes(m: OutgoingMessage): number {
  let n = 70 + Buffer.byteLength(m.value) + (m.key === null ? 0 : Buffer.byteLength(m.key));
  for (const [k, v] of Object.entries(m.headers ?? {})) n += 8 + Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}
