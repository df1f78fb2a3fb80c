import { TerminusModule } from '@nestjs/terminus';
import { collectDefaultMetrics, register } from 'prom-client';
import { MetricsController } from '../metrics/metrics.controller';
import { HealthController } from './health.controller';

let defaultMetricsStarted = false;

/** What a module adds to serve /healthz, /readyz and /metrics; it must also provide READINESS_CHECKS. */
export function opsEndpoints() {
  if (!defaultMetricsStarted) {
    collectDefaultMetrics({ register });
    defaultMetricsStarted = true;
  }
  return { imports: [TerminusModule.forRoot({ logger: false })], controllers: [HealthController, MetricsController] };
}
