import type { NextFunction, Request, Response } from 'express';
import { ErrorCode, problemFor } from './problem';

/**
 * Express error middleware placed right after the JSON body parser: its failures never reach
 * Nest's filters, so they are rendered as problem+json here (413 too large, 400 malformed).
 */
export function bodyParserErrors(err: { type?: string } | undefined, _req: Request, res: Response, next: NextFunction): void {
  const problem =
    err?.type === 'entity.too.large'
      ? problemFor(ErrorCode.PAYLOAD_TOO_LARGE, 'request body exceeds 1 MiB')
      : err?.type === 'entity.parse.failed'
        ? problemFor(ErrorCode.MALFORMED_JSON, 'request body is not valid JSON')
        : null;
  if (!problem) return next(err);
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}
