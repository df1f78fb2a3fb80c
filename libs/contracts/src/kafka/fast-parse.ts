import { ParseResult, parseMessage } from './parse-message';

/*
 * What the hand-written fast parsers (heartbeats, agent commands, job reports) share. A fast path
 * may be stricter than its message class, never looser: whatever it does not accept goes through
 * parseMessage, which gives the verdict and the dead-letter reason.
 */

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isInt = (v: unknown, min: number, max = Number.MAX_SAFE_INTEGER): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/** Parses one Kafka message value: `fast` for the well-formed, the class for everything else. */
export function parseWithFastPath<T extends object>(cls: new () => T, fast: (data: Obj) => T | null, raw: Buffer | null): ParseResult<T> {
  if (raw !== null) {
    let data: unknown;
    try {
      data = JSON.parse(raw.toString('utf8'));
    } catch {
      data = undefined;
    }
    const value = isObj(data) ? fast(data) : null;
    if (value) return { ok: true, value };
  }
  return parseMessage(cls, raw);
}
