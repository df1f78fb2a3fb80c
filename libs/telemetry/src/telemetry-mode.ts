/**
 * What a service does with OpenTelemetry, from the standard variables:
 * - `off`: OTEL_SDK_DISABLED=true; no spans, and no trace context is carried either.
 * - `trace`: a traces exporter is in effect (an OTLP endpoint, or OTEL_TRACES_EXPORTER other than
 *   `none`); the Node SDK runs, with its instrumentations, and every hop is a span.
 * - `propagate` (the default): nothing would be exported, so no span is made; the W3C trace context
 *   a client sent is carried, unchanged, through job rows, outbox rows and Kafka headers.
 */
export type TelemetryMode = 'off' | 'propagate' | 'trace';

export function telemetryMode(env: Record<string, string | undefined>): TelemetryMode {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return 'off';
  const hasEndpoint = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const exporters = (env.OTEL_TRACES_EXPORTER ?? (hasEndpoint ? 'otlp' : 'none')).split(',').map((e) => e.trim().toLowerCase());
  return exporters.some((e) => e !== '' && e !== 'none') ? 'trace' : 'propagate';
}
