import { Execution, ExecutionResult, ExecutionSpec, Executor } from './executor';

function msOf(value: string | undefined, fallback: number): number {
  const ms = Number(value ?? fallback);
  return Number.isFinite(ms) && ms >= 0 ? ms : fallback;
}

/**
 * Runs nothing: ends each job after SIM_DURATION_MS (job env, default 1000) with exit 0. For load tests.
 * A stop takes SIM_STOP_MS (job env, default 0: a job that exits on SIGTERM at once), but no longer
 * than the stop's grace, after which it is "killed" (SIGKILL), as a real process would be.
 */
export class SleepExecutor implements Executor {
  constructor(private readonly killGraceMs = 10_000) {}

  start(spec: ExecutionSpec, onExit: (r: ExecutionResult) => void): Execution {
    const ms = msOf(spec.env.SIM_DURATION_MS, 1000);
    const stopMs = msOf(spec.env.SIM_STOP_MS, 0);
    let done = false;
    let stopping = false;
    const end = (r: ExecutionResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      onExit(r);
    };
    const timer = setTimeout(() => end({ exitCode: 0, signal: null, stoppedFor: null }), ms);
    return {
      stop: (reason, graceMs) => {
        if (done || stopping) return;
        stopping = true;
        const grace = graceMs ?? this.killGraceMs;
        const signal = stopMs > grace ? 'SIGKILL' : 'SIGTERM';
        if (Math.min(stopMs, grace) === 0) return end({ exitCode: null, signal, stoppedFor: reason });
        setTimeout(() => end({ exitCode: null, signal, stoppedFor: reason }), Math.min(stopMs, grace)).unref();
      },
    };
  }
}
