import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { ApiError, ErrorCode, ProblemDetails, problemFor } from './problem';

/** Renders every error as RFC 9457 application/problem+json. A 5xx hides internals and logs an error id. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const problem = this.toProblem(exception);
    res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  }

  private toProblem(e: unknown): ProblemDetails {
    if (e instanceof ApiError) return e.getResponse() as ProblemDetails;
    if (e instanceof HttpException && e.getStatus() < 500) {
      const status = e.getStatus();
      const code = status === 404 ? ErrorCode.NOT_FOUND : status === 413 ? ErrorCode.PAYLOAD_TOO_LARGE : status === 401 ? ErrorCode.UNAUTHENTICATED : status === 403 ? ErrorCode.FORBIDDEN : ErrorCode.VALIDATION_FAILED;
      return { ...problemFor(code, e.message), status };
    }
    const errorId = randomUUID();
    this.logger.error({ err: e, errorId }, 'unhandled error');
    return { ...problemFor(ErrorCode.INTERNAL, `internal error; quote error id ${errorId}`), errorId };
  }
}
