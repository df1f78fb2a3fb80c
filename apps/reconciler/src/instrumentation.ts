import { startTelemetry } from '@gantry/telemetry';

startTelemetry('reconciler');
