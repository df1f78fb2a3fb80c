import { Histogram } from 'prom-client';

const cycleSeconds = new Histogram({
  name: 'gantry_scheduler_cycle_seconds',
  help: 'Duration of one scheduling cycle',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
});
const stepSeconds = new Histogram({
  name: 'gantry_scheduler_cycle_step_seconds',
  help: 'Duration of each step of a scheduling cycle',
  labelNames: ['step'],
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
});

/** How long one scheduling cycle and each of its steps took: the cycle's result and its metrics. */
export class CycleClock {
  private readonly steps: Record<string, number> = {};
  private readonly started = performance.now();
  private mark = this.started;
  private readonly stop = cycleSeconds.startTimer();

  /** The step that ends now, timed from the previous lap. */
  lap(step: string): void {
    const t = performance.now();
    this.steps[step] = t - this.mark;
    stepSeconds.observe({ step }, (t - this.mark) / 1000);
    this.mark = t;
  }

  /** A part of the current step, run alongside others: its time from the last lap to when it settles. */
  time<T>(part: string, work: Promise<T>): Promise<T> {
    const from = this.mark;
    return work.then((v) => ((this.steps[part] = performance.now() - from), v));
  }

  elapsedMs(): number {
    return performance.now() - this.started;
  }

  /** Ends the cycle: its duration goes to gantry_scheduler_cycle_seconds; returns the steps, ms. */
  end(): Record<string, number> {
    this.stop();
    return this.steps;
  }
}
