import { startTelemetry } from '@gantry/telemetry';

startTelemetry('heartbeat-ingester');
