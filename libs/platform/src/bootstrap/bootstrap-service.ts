import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger, LoggerModule } from 'nestjs-pino';
import { createValidationPipe } from '../http/validation-pipe';
import { ProblemDetailsFilter } from '../http/problem-details.filter';
import { HttpDrain } from '../http/http-drain';
import { ServiceEnv } from '../config/env';

export interface BootstrapOptions {
  /** Called before listen(): body parsers, Swagger, anything app-specific. */
  configure?: (app: INestApplication) => void | Promise<void>;
}

/** How long SIGTERM waits for HTTP requests in flight before closing their connections. */
const HTTP_DRAIN_MS = 10_000;

/**
 * Creates and starts a service's Nest app the same way everywhere: pino logs, problem+json errors,
 * strict validation, then listen. On SIGTERM or SIGINT, in this order: HTTP drains (HttpDrain), the
 * app's shutdown hooks run (loops stop, consumers commit and stop, the outbox relay flushes, clients
 * close), and the process exits by the same signal.
 */
export async function bootstrapService(module: Type<unknown> | DynamicModule, config: ServiceEnv, opts: BootstrapOptions = {}): Promise<INestApplication> {
  const app = await NestFactory.create(module, { bufferLogs: true, bodyParser: false });
  const drain = new HttpDrain();
  app.use(drain.middleware);
  app.useLogger(app.get(PinoNestLogger));
  app.useGlobalFilters(new ProblemDetailsFilter());
  app.useGlobalPipes(createValidationPipe());
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

/** nestjs-pino module: request logs at debug (health probes are noise), app logs as configured. */
export function loggerModule(service: string, level: string) {
  return LoggerModule.forRoot({
    pinoHttp: {
      name: service,
      level,
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'debug'),
    },
  });
}

/** `bootstrap().catch(exitOnBootFailure)`: logs why start-up failed and exits non-zero. */
export function exitOnBootFailure(e: unknown): never {
  console.error(`start-up failed: ${(e as Error)?.message ?? e}`);
  process.exit(1);
}
