import { OverloadedError, isDatabaseUnavailable } from '@gantry/persistence';
import { ApiError, ErrorCode } from '@gantry/platform';

/** ioredis's own failures: a command past commandTimeout, a connection that is closed or retrying. */
const REDIS_UNAVAILABLE = /^(Command timed out|Connection is closed|Reached the max retries per request limit)/;

/**
 * The gateway's translation of errors that mean "not now" into 503 problems with Retry-After
 * (ProblemDetailsFilter's translator): Postgres or Redis did not answer in time or cannot be
 * reached, or admission control refused a create. Anything else stays a 500.
 */
export function translateUnavailable(admissionWaitMs: number): (e: unknown) => ApiError | null {
  return (e) => {
    if (e instanceof OverloadedError) {
      // Shed while others wait: the queue is short-lived, so come back soon.
      if (e.reason === 'shedding') return new ApiError(ErrorCode.UNAVAILABLE, 'the gateway is overloaded; try again later').retryAfter(1);
      return new ApiError(ErrorCode.UNAVAILABLE, 'too many creates are waiting; try again later').retryAfter(admissionWaitMs / 1000);
    }
    if (isDatabaseUnavailable(e)) return new ApiError(ErrorCode.UNAVAILABLE, 'the database did not answer in time; try again later').retryAfter(1);
    if (e instanceof Error && REDIS_UNAVAILABLE.test(e.message))
      return new ApiError(ErrorCode.UNAVAILABLE, 'live node state did not answer in time; try again later').retryAfter(1);
    return null;
  };
}
