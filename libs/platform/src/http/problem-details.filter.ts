import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode, ProblemDetails, problemFor } from './problem';

/**
 * Renders every error as RFC 9457 application/problem+json. A 5xx hides internals and logs an error
 * id. Fastify's own errors (body over the limit, a Content-Length that does not match) arrive as
 * HttpExceptions with their status: Nest maps them before its filters run.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemDetails');

  /**
   * @param translate turns an error this lib cannot know (a database timeout) into the problem it
   * means (a 503 with Retry-After); null leaves it a 500.
   */
  constructor(private readonly translate: (e: unknown) => ApiError | null = () => null) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.render(exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }

  render(exception: unknown, req: FastifyRequest, reply: FastifyReply): void {
    const e = exception instanceof HttpException ? exception : (this.translate(exception) ?? exception);
    const problem = this.toProblem(e, req);
    if (e instanceof ApiError) for (const [name, value] of Object.entries(e.headers)) void reply.header(name, value);
    void reply.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
  }

  private toProblem(e: unknown, req: FastifyRequest): ProblemDetails {
    if (e instanceof ApiError) return e.getResponse() as ProblemDetails;
    if (e instanceof HttpException && e.getStatus() === 503) {
      // Not ready (terminus on /readyz): an expected answer while a dependency is away, not an error to log.
      const body = e.getResponse() as { error?: Record<string, { message?: string }> };
      const down = Object.entries(body?.error ?? {}).map(([name, v]) => (v?.message ? `${name} (${v.message})` : name));
      return { ...problemFor(ErrorCode.UNAVAILABLE, down.length ? `not ready: ${down.join('; ')}` : e.message) };
    }
    if (e instanceof HttpException && e.getStatus() < 500) {
      const status = e.getStatus();
      // The only 413 is the body limit (BODY_LIMIT_BYTES); Fastify's message would not say which.
      if (status === 413) return problemFor(ErrorCode.PAYLOAD_TOO_LARGE, 'request body exceeds 1 MiB');
      const code =
        status === 404 ? ErrorCode.NOT_FOUND : status === 401 ? ErrorCode.UNAUTHENTICATED : status === 403 ? ErrorCode.FORBIDDEN : ErrorCode.VALIDATION_FAILED;
      return { ...problemFor(code, e.message), status };
    }
    const errorId = randomUUID();
    this.logger.error({ err: e, errorId, method: req.method, url: req.url }, 'unhandled error');
    return { ...problemFor(ErrorCode.INTERNAL, `internal error; quote error id ${errorId}`), errorId };
  }
}
