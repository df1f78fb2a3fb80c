/**
 * What a service does with OpenTelemetry, from the standard variables:
 * - `off`: OTEL_SDK_DISABLED=true; no spans, and no trace context is carried either.
 * - `trace`: a traces exporter is in effect (an OTLP endpoint, or OTEL_TRACES_EXPORTER other than
 *   `none`); the Node SDK runs, with its instrumentations, and every hop is a span.
 * - `propagate` (the default): nothing would be exported, so no span is made; the W3C trace context
 *   a client sent is carried, unchanged, through job rows, outbox rows and Kafka headers.
 */
export type TelemetryMode = 'off' | 'propagate' | 'trace';

/** Whether an OTLP endpoint for traces is configured (the general one or the traces one). */
export const hasOtlpTracesEndpoint = (env: Record<string, string | undefined>): boolean =>
  Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);

export function telemetryMode(env: Record<string, string | undefined>): TelemetryMode {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return 'off';
  const exporters = (env.OTEL_TRACES_EXPORTER ?? (hasOtlpTracesEndpoint(env) ? 'otlp' : 'none')).split(',').map((e) => e.trim().toLowerCase());
  return exporters.some((e) => e !== '' && e !== 'none') ? 'trace' : 'propagate';
}
