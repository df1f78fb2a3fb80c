import { KeyObject, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

/** Headers of a message an agent signs (contract 4.1). */
export const NODE_ID_HEADER = 'gantry-node-id';
export const SIGNATURE_HEADER = 'gantry-signature';
const PREFIX = 'v1=';

/** The HMAC key of a node credential: the credential's UTF-8 bytes (contract 4.1). */
export function nodeSigningKey(credential: string): KeyObject {
  return createSecretKey(Buffer.from(credential, 'utf8'));
}

/** `v1=` + lowercase hex of HMAC-SHA256(credential, value bytes exactly as sent). */
export function signNodeMessage(value: Buffer | string, key: KeyObject): string {
  return PREFIX + createHmac('sha256', key).update(value).digest('hex');
}

/** Whether `header` is exactly the node's signature of `value` (lowercase hex; constant-time compare). */
export function nodeSignatureMatches(value: Buffer, header: string | undefined, key: KeyObject): boolean {
  if (header === undefined || header.length !== PREFIX.length + 64) return false;
  return timingSafeEqual(Buffer.from(header, 'latin1'), Buffer.from(signNodeMessage(value, key), 'latin1'));
}
