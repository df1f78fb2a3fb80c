import { StreamPosition } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';

// `<xid8>.<job uuid>.<seq>`: opaque to clients; it names a place in the order, not a secret, and
// reading from any place still shows only what the caller may see.
const FORMAT = /^(\d{1,20})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.(\d{1,10})$/;
const MAX_XID8 = 2n ** 64n - 1n;
const MAX_SEQ = 2 ** 31 - 1;

export function encodeStreamPosition(p: StreamPosition): string {
  return `${p.xid}.${p.jobId}.${p.seq}`;
}

/** Parses a position from Last-Event-ID or `after=`; anything else is a 400 naming `field`. */
export function decodeStreamPosition(raw: string, field: string): StreamPosition {
  const m = FORMAT.exec(raw);
  if (!m || BigInt(m[1]) > MAX_XID8 || Number(m[3]) > MAX_SEQ) {
    throw new ApiError(ErrorCode.INVALID_CURSOR, `${field} is not a position this API issued`, [
      { field, message: 'must be a position from an earlier event (its SSE id or nextPosition)' },
    ]);
  }
  return { xid: m[1], jobId: m[2], seq: Number(m[3]) };
}

/** Last-Event-ID of a job's own stream: the seq of the last event received. */
export function decodeSeq(raw: string, field: string): number {
  if (!/^\d{1,10}$/.test(raw) || Number(raw) > MAX_SEQ) {
    throw new ApiError(ErrorCode.VALIDATION_FAILED, `${field} must be the seq of an event (a whole number)`, [{ field, message: 'must be a whole number' }]);
  }
  return Number(raw);
}
