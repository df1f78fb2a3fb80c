import { Context, ROOT_CONTEXT, SpanKind, context, propagation, trace } from '@opentelemetry/api';
import type { MessageHeaders } from './message';

const tracer = trace.getTracer('gantry-messaging');

/** W3C trace context as headers (`traceparent`, `tracestate`): of a Kafka message, an outbox row. */
export type TraceHeaders = Record<string, string>;

/** W3C trace context of the active span, to store with an outbox row or put on a Kafka message. */
export function currentTraceHeaders(): TraceHeaders {
  const carrier: TraceHeaders = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * The trace context that a request's work continues: the active span's when traces are exported
 * (the HTTP instrumentation's server span), or else the W3C context the client sent, checked by
 * the propagator and passed on as it came (no span of ours exists to be its parent). Empty when
 * the client sent none, or one the propagator refuses.
 */
export function requestTraceHeaders(requestHeaders: Record<string, string | string[] | undefined>): TraceHeaders {
  const active = currentTraceHeaders();
  if (active.traceparent) return active;
  const carrier: TraceHeaders = {};
  propagation.inject(propagation.extract(ROOT_CONTEXT, requestHeaders), carrier);
  return carrier;
}

export function extractTraceContext(headers: MessageHeaders | undefined): Context {
  return propagation.extract(context.active(), headers ?? {});
}

/**
 * Runs `fn` at once in a consumer span that continues the producer's trace, so one trace follows a
 * job from the POST, through the outbox and Kafka, to the agent; the span ends when `fn` returns.
 * Synchronous on purpose: a promise and a microtask turn per message is what the agent's command
 * loop would otherwise pay, and when nothing is exported the context lasts only for synchronous
 * work (libs/telemetry, SynchronousContextManager). Inside `fn`, activeTraceId() and
 * currentTraceHeaders() see the span (with no exporter: the producer's context itself), and pino,
 * when traces are exported, adds its ids.
 */
export function inConsumerSpan<T>(headers: MessageHeaders | undefined, name: string, attrs: Record<string, string | number>, fn: () => T): T {
  const parent = extractTraceContext(headers);
  const span = tracer.startSpan(name, { kind: SpanKind.CONSUMER, attributes: attrs }, parent);
  try {
    return context.with(trace.setSpan(parent, span), fn);
  } finally {
    span.end();
  }
}

/** The trace id of the active span, or null; handy for logs and tests. */
export function activeTraceId(): string | null {
  const span = trace.getSpan(context.active());
  const id = span?.spanContext().traceId;
  return id && !/^0+$/.test(id) ? id : null;
}
