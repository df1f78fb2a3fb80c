import { Controller, Get, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { READINESS_CHECKS, ReadinessSource, withTimeout } from './readiness-check';

@ApiExcludeController()
@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    @Inject(READINESS_CHECKS) private readonly source: ReadinessSource,
  ) {}

  /** Alive: the process answers. Never checks dependencies, so a database outage does not restart pods. */
  @Get('healthz')
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /** Ready: every dependency answers within 2 s. */
  @Get('readyz')
  @HealthCheck()
  readyz() {
    return this.health.check(
      this.source.checks().map((c) => async () => {
        const session = this.indicators.check(c.name);
        try {
          await withTimeout(c.check(), 2_000, c.name);
          return session.up();
        } catch (e) {
          return session.down({ message: (e as Error).message });
        }
      }),
    );
  }
}
