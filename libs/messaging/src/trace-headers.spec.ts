import { context, propagation } from '@opentelemetry/api';
import { startTelemetry, stopTelemetry } from '@gantry/telemetry';
import { activeTraceId, currentTraceHeaders, inConsumerSpan, requestTraceHeaders } from './trace-headers';

// The default mode (no exporter configured): no span is made, the client's context is carried as sent.
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

describe('trace headers with nothing exported (propagate mode)', () => {
  beforeAll(() => {
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    delete process.env.OTEL_TRACES_EXPORTER;
    expect(startTelemetry('test')).toBe('propagate');
  });
  afterAll(() => stopTelemetry());

  it('a request continues the traceparent and tracestate the client sent, unchanged', () => {
    expect(requestTraceHeaders({ traceparent: TRACEPARENT, tracestate: 'vendor=abc', host: 'x' })).toEqual({
      traceparent: TRACEPARENT,
      tracestate: 'vendor=abc',
    });
  });

  it.each([
    ['no header', {}],
    ['a malformed traceparent', { traceparent: '00-not-a-trace-01' }],
    ['an all-zero trace id', { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }],
    ['an oversized header', { traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01${'x'.repeat(10_000)}` }],
  ])('a request with %s continues no trace', (_name, headers) => {
    expect(requestTraceHeaders(headers)).toEqual({});
  });

  it("a consumer handles a message inside the producer's context, and only while it handles it", () => {
    const seen = inConsumerSpan({ traceparent: TRACEPARENT }, 'test', { attr: 1 }, () => ({ id: activeTraceId(), headers: currentTraceHeaders() }));
    expect(seen).toEqual({ id: TRACE_ID, headers: { traceparent: TRACEPARENT } });
    expect(activeTraceId()).toBeNull();
    expect(currentTraceHeaders()).toEqual({});
  });

  it('installs no async context: nothing follows an await (no async hooks to pay for)', async () => {
    const after = await inConsumerSpan({ traceparent: TRACEPARENT }, 'test', {}, async () => {
      await Promise.resolve();
      return activeTraceId();
    });
    expect(after).toBeNull();
    expect(context.active()).toBeDefined();
    expect(propagation.fields()).toEqual(['traceparent', 'tracestate']);
  });
});
