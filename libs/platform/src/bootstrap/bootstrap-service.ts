import { BadRequestException, DynamicModule, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Logger as PinoNestLogger, LoggerModule } from 'nestjs-pino';
import pino from 'pino';
import { FastValidator, createValidationPipe } from '../http/validation-pipe';
import { ProblemDetailsFilter } from '../http/problem-details.filter';
import { HttpDrain } from '../http/http-drain';
import { BODY_LIMIT_BYTES, useJsonBodies } from '../http/json-body';
import { ServiceEnv } from '../config/env';
import { ApiError } from '../http/problem';

export interface BootstrapOptions {
  /** Called before listen(): Swagger, anything app-specific. */
  configure?: (app: NestFastifyApplication) => void | Promise<void>;
  /** Hand-written body checks by DTO class, for hot paths (see FastValidator). */
  fastValidators?: ReadonlyMap<unknown, FastValidator>;
  /** Turns errors the platform cannot know (a database timeout) into the problem they mean; see ProblemDetailsFilter. */
  translateError?: (e: unknown) => ApiError | null;
}

/** How long SIGTERM waits for HTTP requests in flight before closing their connections. */
const HTTP_DRAIN_MS = 10_000;

/**
 * Creates and starts a service's Nest app the same way everywhere: on Fastify (ADR 0011), JSON
 * bodies up to 1 MiB, pino logs, problem+json errors, strict validation, then listen. On SIGTERM or
 * SIGINT, in this order: HTTP drains (HttpDrain), the app's shutdown hooks run (loops stop,
 * consumers commit and stop, the outbox relay flushes, clients close), and the process exits by
 * the same signal.
 */
export async function bootstrapService(
  module: Type<unknown> | DynamicModule,
  config: ServiceEnv,
  opts: BootstrapOptions = {},
): Promise<NestFastifyApplication> {
  const problems = new ProblemDetailsFilter(opts.translateError);
  const adapter = new FastifyAdapter({
    bodyLimit: BODY_LIMIT_BYTES,
    // Idle keep-alive connections are kept 65 s (as load balancers do, ALB 60 s, nginx 75 s), not
    // Node's 5 s: under load a Node 20 server accepts one new connection per event-loop iteration
    // (libuv 1.45, "don't accept() connections in a loop"), so a client that must reconnect after
    // every lull waits in the kernel's accept queue for seconds while its old connections would
    // have been served at once (ADR 0017, bench:api's overload). A whole request (headers and body,
    // at most 1 MiB) must arrive within 30 s: a client trickling bytes holds a socket no longer.
    // Answers are bounded by the database's and Redis's timeouts (GANTRY_DB_*_TIMEOUT_MS,
    // GANTRY_REDIS_COMMAND_TIMEOUT_MS) and the gateway's admission control.
    keepAliveTimeout: 65_000,
    requestTimeout: 30_000,
    // Routing as Express did it: case-insensitive, a trailing slash ignored, node ids up to 253 characters.
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true, maxParamLength: 1024 },
    // An undecodable URL (Fastify answers it before routing) is a 400 problem, as Express's URIError was.
    frameworkErrors: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => problems.render(new BadRequestException(err.message), req, reply),
  });
  const app = await NestFactory.create<NestFastifyApplication>(module, adapter, { bufferLogs: true, bodyParser: false });
  const fastify = app.getHttpAdapter().getInstance();
  useJsonBodies(fastify);
  const drain = new HttpDrain();
  fastify.addHook('onRequest', drain.onRequest);
  app.useLogger(app.get(PinoNestLogger));
  app.useGlobalFilters(problems);
  app.useGlobalPipes(createValidationPipe(opts.fastValidators));
  await opts.configure?.(app);
  await app.listen(config.GANTRY_HTTP_PORT, config.GANTRY_HTTP_HOST);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void (async () => {
        await drain.drain(app.getHttpServer(), HTTP_DRAIN_MS);
        await app.close();
        process.kill(process.pid, signal); // the listener is gone: the default action ends the process
      })();
    });
  }
  return app;
}

/**
 * nestjs-pino module: request logs at debug (health probes are noise), app logs as configured.
 * pino-http builds a child logger per request, with the request serialised into its bindings,
 * whether or not anything is written; below debug it would write only the 5xx, which
 * ProblemDetailsFilter logs anyway (with the error id, method and URL). So at info and above the
 * request middleware is left out, and so is the request context of logs written during a request.
 */
export function loggerModule(service: string, level: string) {
  const requestLogs = (pino.levels.values[level] ?? Infinity) <= pino.levels.values.debug;
  return LoggerModule.forRoot({
    pinoHttp: {
      name: service,
      level,
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'debug'),
      // The serialised request carries every header: a bearer token must not reach the logs.
      redact: { paths: ['req.headers.authorization'], censor: '[redacted]' },
    },
    ...(requestLogs ? {} : { forRoutes: [] }),
  });
}

/** `bootstrap().catch(exitOnBootFailure)`: logs why start-up failed and exits non-zero. */
export function exitOnBootFailure(e: unknown): never {
  console.error(`start-up failed: ${(e as Error)?.message ?? e}`);
  process.exit(1);
}
