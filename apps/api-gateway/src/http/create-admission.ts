import { Gauge, Histogram } from 'prom-client';
import { ConcurrencyLimitOptions, ConcurrencyLimitState, admits, initialConcurrencyLimit, nextConcurrencyLimit } from '@gantry/domain';

const limitGauge = new Gauge({
  name: 'gantry_create_inflight_limit',
  help: 'Creates let in at once (adaptive, GANTRY_CREATE_LATENCY_TARGET_MS); past it a create is a 503 at once',
});
const inFlightGauge = new Gauge({ name: 'gantry_create_inflight', help: 'Creates let in whose answer has not been sent yet' });
const duration = new Histogram({
  name: 'gantry_create_duration_seconds',
  help: 'POST /v1/jobs let in, from its arrival at the gateway (headers read) to its answer sent, whatever the answer',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 2, 5, 10],
});

/**
 * The gateway's door for creates: an adaptive limit on how many are in progress at once (the
 * policy is libs/domain's concurrency-limit.ts; null options: no limit, only the timing). `enter`
 * is called first thing for every create; it answers null (refuse with a 503 now) or the function
 * to call once the answer has gone, which feeds the create's latency back into the limit.
 */
export class CreateAdmission {
  private state: ConcurrencyLimitState;
  private inFlight = 0;

  constructor(
    private readonly opts: ConcurrencyLimitOptions | null,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.state = opts ? initialConcurrencyLimit(opts) : { limit: Number.POSITIVE_INFINITY, lastDecreaseAtMs: 0 };
    if (opts) limitGauge.set(Math.floor(this.state.limit));
  }

  enter(): (() => void) | null {
    if (!admits(this.state, this.inFlight)) return null;
    const inFlight = ++this.inFlight;
    inFlightGauge.set(inFlight);
    const startedAt = this.now();
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight--;
      inFlightGauge.set(this.inFlight);
      const atMs = this.now();
      duration.observe((atMs - startedAt) / 1000);
      if (!this.opts) return;
      this.state = nextConcurrencyLimit(this.state, { latencyMs: atMs - startedAt, inFlight, atMs }, this.opts);
      limitGauge.set(Math.floor(this.state.limit));
    };
  }

  /** The limit now (for tests and logs). */
  get limit(): number {
    return this.state.limit;
  }
}
