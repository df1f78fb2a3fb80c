import { Execution, ExecutionResult, ExecutionSpec, Executor } from '../executors/executor';
import { AttemptLogs } from './attempt-logs';

/**
 * An executor that tells AttemptLogs when each attempt starts and ends, so the log server knows
 * when a follow is over and the cap knows which logs grow. The executor itself is untouched.
 */
export class LoggedExecutor implements Executor {
  constructor(private readonly inner: Executor, private readonly logs: AttemptLogs) {}

  start(spec: ExecutionSpec, onExit: (result: ExecutionResult) => void): Execution {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.logs.finished(spec.jobId, spec.attempt);
    };
    this.logs.started(spec.jobId, spec.attempt);
    try {
      return this.inner.start(spec, (result) => {
        end();
        onExit(result);
      });
    } catch (err) {
      end();
      throw err;
    }
  }
}
