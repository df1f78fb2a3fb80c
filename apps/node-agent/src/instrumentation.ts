import { startTelemetry } from '@gantry/telemetry';

startTelemetry('node-agent');
