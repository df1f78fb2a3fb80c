import { Injectable } from '@nestjs/common';
import type { ReadinessCheck } from '@gantry/platform';

/** Service-specific readiness (a consumer has joined its group, ...): providers add theirs at construction. */
@Injectable()
export class ReadinessRegistry {
  readonly checks: ReadinessCheck[] = [];
  add(check: ReadinessCheck): void {
    this.checks.push(check);
  }
}
