import { BadRequestException, HttpException, Logger, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, ErrorCode } from './problem';
import { ProblemDetailsFilter } from './problem-details.filter';

function render(exception: unknown, filter = new ProblemDetailsFilter()) {
  const sent: { status?: number; type?: string; body?: any; headers: Record<string, string> } = { headers: {} };
  const reply = {
    status(s: number) {
      sent.status = s;
      return this;
    },
    type(t: string) {
      sent.type = t;
      return this;
    },
    header(n: string, v: string) {
      sent.headers[n] = v;
      return this;
    },
    send(b: string) {
      sent.body = JSON.parse(b);
      return this;
    },
  } as unknown as FastifyReply;
  filter.render(exception, { method: 'POST', url: '/v1/jobs' } as FastifyRequest, reply);
  return sent;
}

describe('ProblemDetailsFilter', () => {
  // The 5xx cases log; keep the test output quiet and look at what was logged.
  const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  beforeEach(() => error.mockClear());
  afterAll(() => error.mockRestore());

  it.each<[string, unknown, number, string, string | RegExp]>([
    ['an ApiError: its own problem', new ApiError(ErrorCode.UNPROCESSABLE, 'queue q does not exist'), 422, 'unprocessable', 'queue q does not exist'],
    [
      "Fastify's body limit (Nest maps it to a 413 HttpException)",
      new HttpException('Request body is too large', 413),
      413,
      'payload-too-large',
      'request body exceeds 1 MiB',
    ],
    ['any other 413', new PayloadTooLargeException(), 413, 'payload-too-large', 'request body exceeds 1 MiB'],
    ['a 404', new NotFoundException('Cannot GET /x'), 404, 'not-found', 'Cannot GET /x'],
    ['a 400 (an undecodable URL)', new BadRequestException("'/v1/jobs/%zz' is not a valid url component"), 400, 'validation-failed', /not a valid url/],
    ['an unexpected error: a 500 that hides it', new Error('db password is hunter2'), 500, 'internal', /^internal error; quote error id [0-9a-f-]{36}$/],
    ['a 5xx HttpException: a 500 as well', new HttpException('upstream', 502), 500, 'internal', /^internal error; quote error id/],
    [
      'a 503 (not ready): a 503 naming what is down',
      new HttpException({ status: 'error', error: { postgres: { status: 'down', message: 'timeout' } } }, 503),
      503,
      'unavailable',
      'not ready: postgres (timeout)',
    ],
  ])('%s', (_n, exception, status, code, detail) => {
    const sent = render(exception);
    expect(sent.status).toBe(status);
    expect(sent.type).toBe('application/problem+json');
    expect(sent.body).toMatchObject({ type: `https://gantry.dev/problems/${code}`, status });
    expect(sent.body.detail).toMatch(detail);
  });

  it('logs a 5xx once, with its error id, method and URL', () => {
    const sent = render(new Error('boom'));
    expect(error).toHaveBeenCalledTimes(1);
    expect(error.mock.calls[0][0]).toMatchObject({ errorId: sent.body.errorId, method: 'POST', url: '/v1/jobs' });
  });

  it.each([
    ['a 4xx', new ApiError(ErrorCode.NOT_FOUND, 'job x not found')],
    ['not ready', new HttpException({ status: 'error', error: { kafka: { status: 'down' } } }, 503)],
  ])('logs nothing for %s', (_n, exception) => {
    render(exception);
    expect(error).not.toHaveBeenCalled();
  });

  it('sends the headers an ApiError carries: Retry-After on a 429', () => {
    const sent = render(new ApiError(ErrorCode.RATE_LIMITED, 'slow down').retryAfter(0.2));
    expect(sent.status).toBe(429);
    expect(sent.headers).toEqual({ 'retry-after': '1' });
  });

  it('renders an error its translator knows as the problem it means, and logs nothing', () => {
    const timeout = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
    const filter = new ProblemDetailsFilter((e) =>
      (e as { code?: string }).code === '57014' ? new ApiError(ErrorCode.UNAVAILABLE, 'database busy').retryAfter(2) : null,
    );
    const sent = render(timeout, filter);
    expect({ status: sent.status, detail: sent.body.detail, headers: sent.headers }).toEqual({
      status: 503,
      detail: 'database busy',
      headers: { 'retry-after': '2' },
    });
    expect(error).not.toHaveBeenCalled();
    expect(render(new Error('other'), filter).status).toBe(500);
  });
});
