import { context, propagation } from '@opentelemetry/api';
import { NodeSDK, core } from '@opentelemetry/sdk-node';
import { getNodeAutoInstrumentations } from '@opentelemetry/auto-instrumentations-node';
import { SynchronousContextManager } from './synchronous-context-manager';
import { TelemetryMode, hasOtlpTracesEndpoint, telemetryMode } from './telemetry-mode';

let started: TelemetryMode | null = null;
let sdk: NodeSDK | null = null;

/**
 * Starts OpenTelemetry as telemetryMode says. Must run before anything it instruments (http, pino)
 * is required, so each service's `instrumentation.ts` is the first import of its main.ts.
 *
 * With an exporter (`trace`), the Node SDK runs with only what carries context instrumented when no
 * OTLP endpoint is set (incoming HTTP, pino; OTEL_NODE_ENABLED_INSTRUMENTATIONS overrides), since a
 * span per Nest handler, SQL or Redis command costs CPU on every request. Without one (`propagate`),
 * spans would go nowhere, yet the SDK cost the gateway CPU on every create (ADR 0031):
 * only the W3C propagator and a synchronous context manager are installed.
 */
export function startTelemetry(serviceName: string): TelemetryMode {
  if (started) return started;
  started = telemetryMode(process.env);
  if (started === 'propagate') {
    propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
    context.setGlobalContextManager(new SynchronousContextManager().enable());
  } else if (started === 'trace') {
    startNodeSdk(serviceName);
  }
  return started;
}

function startNodeSdk(serviceName: string): void {
  process.env.OTEL_SERVICE_NAME ??= serviceName;
  process.env.OTEL_METRICS_EXPORTER ??= 'none'; // Prometheus /metrics is served by prom-client
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  if (!hasOtlpTracesEndpoint(process.env)) process.env.OTEL_NODE_ENABLED_INSTRUMENTATIONS ??= 'http,pino';
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
  if (started === 'propagate') {
    propagation.disable();
    context.disable();
  }
  started = null;
}
