import { startTelemetry } from '@gantry/telemetry';

startTelemetry('scheduler');
