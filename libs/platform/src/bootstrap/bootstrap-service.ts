import { DynamicModule, INestApplication, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Logger as PinoNestLogger, LoggerModule } from 'nestjs-pino';
import { createValidationPipe } from '../http/validation-pipe';
import { ProblemDetailsFilter } from '../http/problem-details.filter';
import { ServiceEnv } from '../config/env';

export interface BootstrapOptions {
  /** Called before listen(): body parsers, Swagger, anything app-specific. */
  configure?: (app: INestApplication) => void | Promise<void>;
}

/**
 * Creates and starts a service's Nest app the same way everywhere: pino logs, problem+json errors,
 * strict validation, shutdown hooks (SIGTERM stops consumers, drains, closes clients), then listen.
 */
export async function bootstrapService(module: Type<unknown> | DynamicModule, config: ServiceEnv, opts: BootstrapOptions = {}): Promise<INestApplication> {
  const app = await NestFactory.create(module, { bufferLogs: true, bodyParser: false });
  app.useLogger(app.get(PinoNestLogger));
  app.useGlobalFilters(new ProblemDetailsFilter());
  app.useGlobalPipes(createValidationPipe());
  app.enableShutdownHooks();
  await opts.configure?.(app);
  await app.listen(config.GANTRY_HTTP_PORT, config.GANTRY_HTTP_HOST);
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
