export { startTelemetry, stopTelemetry } from './start-telemetry';
export { telemetryMode, type TelemetryMode } from './telemetry-mode';
export { SynchronousContextManager } from './synchronous-context-manager';
