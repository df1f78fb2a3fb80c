import pino, { Logger } from 'pino';

/** JSON logs to stdout; trace_id/span_id are added by the OpenTelemetry pino instrumentation. */
export function createLogger(service: string, level = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name: service, level, base: { service } });
}

export type { Logger };
