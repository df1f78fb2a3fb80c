import { startTelemetry } from '@gantry/telemetry';

startTelemetry('api-gateway');
