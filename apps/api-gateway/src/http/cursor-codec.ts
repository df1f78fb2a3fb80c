import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError, ErrorCode } from '@gantry/platform';

/**
 * Opaque, tamper-evident pagination cursors: base64url(JSON) + "." + HMAC-SHA256.
 * An altered or foreign cursor is a 400, never a silently different page.
 */
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(payload: object): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  decode<T>(cursor: string, isValid: (v: unknown) => v is T): T {
    const [body, mac, extra] = cursor.split('.');
    if (!body || !mac || extra !== undefined) throw this.invalid();
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw this.invalid();
    let value: unknown;
    try {
      value = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw this.invalid();
    }
    if (!isValid(value)) throw this.invalid();
    return value;
  }

  private sign(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }

  private invalid(): ApiError {
    return new ApiError(ErrorCode.INVALID_CURSOR, 'cursor is malformed or was altered; start the listing again without it');
  }
}
