import { Context, SpanKind, context, propagation, trace } from '@opentelemetry/api';
import type { MessageHeaders } from './message';

const tracer = trace.getTracer('gantry-messaging');

/** W3C trace context of the active span, to store with an outbox row or put on a Kafka message. */
export function currentTraceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

export function extractTraceContext(headers: MessageHeaders | undefined): Context {
  return propagation.extract(context.active(), headers ?? {});
}

/**
 * Runs `fn` in a consumer span that continues the producer's trace, so one trace follows a job
 * from the POST, through the outbox and Kafka, to the agent.
 */
export function withConsumerSpan<T>(headers: MessageHeaders | undefined, name: string, attrs: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
  const parent = extractTraceContext(headers);
  return tracer.startActiveSpan(name, { kind: SpanKind.CONSUMER, attributes: attrs }, parent, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}

/**
 * withConsumerSpan for synchronous work: runs `fn` at once in the span and ends it when `fn`
 * returns. A promise and a microtask turn per message is what the agent's command loop would
 * otherwise pay (and those turns staggered the batches of the partitions consumed at once).
 * Inside `fn`, activeTraceId() and currentTraceHeaders() see the span, and pino adds its ids.
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
