import { Execution, ExecutionResult, ExecutionSpec, Executor } from './executor';

/** Runs nothing: ends each job after SIM_DURATION_MS (job env, default 1000) with exit 0. For load tests. */
export class SleepExecutor implements Executor {
  start(spec: ExecutionSpec, onExit: (r: ExecutionResult) => void): Execution {
    const ms = Number(spec.env.SIM_DURATION_MS ?? 1000);
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      onExit({ exitCode: 0, signal: null, stoppedFor: null });
    }, Number.isFinite(ms) && ms >= 0 ? ms : 1000);
    return {
      stop: (reason) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        onExit({ exitCode: null, signal: 'SIGTERM', stoppedFor: reason });
      },
    };
  }
}
