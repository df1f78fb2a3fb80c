import type { FastifyInstance } from 'fastify';
import { checkBodyShape } from './body-shape';
import { ApiError, ErrorCode } from './problem';

/** Largest request body accepted (contract §2); a larger one is a 413. */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** `application/*+json` (problem+json, merge-patch+json, ...), with or without parameters. */
const STRUCTURED_JSON = /^application\/[^\s;/]+\+json\s*(;|$)/i;

const OBJECT = 0x7b; // {
const ARRAY = 0x5b; // [
const isJsonSpace = (b: number) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;
const hasUtf8Bom = (b: Buffer) => b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

/**
 * A JSON request body, read the way body-parser's `json()` read it before the Fastify adapter: an
 * empty body is `{}`, a leading BOM is dropped, and anything but an object or array at the top
 * level is malformed (strict). Throws the 400 problem for malformed JSON, and for a body whose
 * shape is out of bounds (checkBodyShape: too deep, too many keys in one object, a NUL character).
 */
export function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return {};
  const start = hasUtf8Bom(body) ? 3 : 0;
  let i = start;
  while (i < body.length && isJsonSpace(body[i])) i++;
  let parsed: unknown;
  if (body[i] === OBJECT || body[i] === ARRAY) {
    try {
      parsed = JSON.parse(body.toString('utf8', start));
    } catch {
      // fall through to the problem
    }
  }
  if (parsed === undefined) throw new ApiError(ErrorCode.MALFORMED_JSON, 'request body is not valid JSON');
  checkBodyShape(parsed);
  return parsed;
}

/**
 * Fastify's body parsing for every service: `application/json` and `application/*+json` up to
 * BODY_LIMIT_BYTES (the limit is the Fastify instance's `bodyLimit`), parsed by parseJsonBody; a
 * body of any other type is left unread and the handler sees none, as with body-parser before.
 */
export function useJsonBodies(fastify: FastifyInstance): void {
  fastify.removeAllContentTypeParsers();
  const json = (_req: unknown, body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
    let parsed: unknown;
    try {
      parsed = parseJsonBody(body);
    } catch (e) {
      return done(e as Error);
    }
    done(null, parsed);
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer' }, json);
  fastify.addContentTypeParser(STRUCTURED_JSON, { parseAs: 'buffer' }, json);
  fastify.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
}
