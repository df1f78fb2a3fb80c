import { NodeSDK } from '@opentelemetry/sdk-node';
import { getNodeAutoInstrumentations } from '@opentelemetry/auto-instrumentations-node';

let sdk: NodeSDK | null = null;

/**
 * Starts OpenTelemetry. Must run before anything it instruments (http, NestJS, pg, ioredis, pino)
 * is required, so each service's `instrumentation.ts` is the first import of its main.ts.
 * Exporters follow the standard OTEL_* variables. With no OTLP endpoint configured nothing is
 * exported, so only what carries context is instrumented (incoming HTTP for `traceparent`, pino for
 * trace ids in logs; OTEL_NODE_ENABLED_INSTRUMENTATIONS overrides): a span per Nest handler, per
 * SQL or Redis command costs CPU on every request and would go nowhere.
 */
export function startTelemetry(serviceName: string): void {
  if (sdk) return;
  process.env.OTEL_SERVICE_NAME ??= serviceName;
  const hasEndpoint = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  process.env.OTEL_TRACES_EXPORTER ??= hasEndpoint ? 'otlp' : 'none';
  process.env.OTEL_METRICS_EXPORTER ??= 'none'; // Prometheus /metrics is served by prom-client
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  if (!hasEndpoint) process.env.OTEL_NODE_ENABLED_INSTRUMENTATIONS ??= 'http,pino';
  sdk = new NodeSDK({
    serviceName,
    instrumentations: [
      getNodeAutoInstrumentations({
        '@opentelemetry/instrumentation-fs': { enabled: false },
        '@opentelemetry/instrumentation-dns': { enabled: false },
        '@opentelemetry/instrumentation-net': { enabled: false },
        // Kafka context is carried explicitly (through the outbox), see libs/messaging/src/trace-headers.ts.
        '@opentelemetry/instrumentation-kafkajs': { enabled: false },
        // Trace ids into log lines, yes; every line parsed again for an OTLP log export, only when logs are exported.
        '@opentelemetry/instrumentation-pino': { disableLogSending: process.env.OTEL_LOGS_EXPORTER === 'none' },
      }),
    ],
  });
  sdk.start();
}

export async function stopTelemetry(): Promise<void> {
  await sdk?.shutdown().catch(() => undefined);
  sdk = null;
}
