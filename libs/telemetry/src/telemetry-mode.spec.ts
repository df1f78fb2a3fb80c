import { TelemetryMode, telemetryMode } from './telemetry-mode';

describe('telemetryMode', () => {
  const cases: Array<[string, Record<string, string>, TelemetryMode]> = [
    ["nothing set: carry the client's context, make no span", {}, 'propagate'],
    ['an OTLP endpoint: trace', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, 'trace'],
    ['a traces endpoint: trace', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, 'trace'],
    ['an exporter named without an endpoint: trace', { OTEL_TRACES_EXPORTER: 'console' }, 'trace'],
    ['exporters listed, one real: trace', { OTEL_TRACES_EXPORTER: 'none, console' }, 'trace'],
    ['exporter none wins over an endpoint', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }, 'propagate'],
    ['an empty exporter list is none', { OTEL_TRACES_EXPORTER: '' }, 'propagate'],
    ['the SDK disabled: off', { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, 'off'],
    ['disabled in capitals: off', { OTEL_SDK_DISABLED: 'TRUE' }, 'off'],
    ['disabled false: as if unset', { OTEL_SDK_DISABLED: 'false' }, 'propagate'],
  ];
  it.each(cases)('%s', (_name, env, mode) => {
    expect(telemetryMode(env)).toBe(mode);
  });
});
