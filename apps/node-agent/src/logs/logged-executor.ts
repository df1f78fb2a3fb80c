import { AttemptRef, Execution, ExecutionResult, ExecutionSpec, Executor } from '../executors/executor';
import { AttemptLogs } from './attempt-logs';

/**
 * An executor that tells AttemptLogs when each attempt starts (or is taken over after an agent
 * restart, ADR 0020) and ends, so the log server knows when a follow is over and the cap knows
 * which logs grow. The executor itself is untouched.
 */
export class LoggedExecutor implements Executor {
  readonly resume?: Executor['resume'];

  constructor(
    private readonly inner: Executor,
    private readonly logs: AttemptLogs,
  ) {
    const resume = inner.resume?.bind(inner);
    if (resume) this.resume = (ref: AttemptRef, onExit) => this.watch(ref, onExit, (exit) => resume(ref, exit));
  }

  start(spec: ExecutionSpec, onExit: (result: ExecutionResult) => void): Execution {
    return this.watch(spec, onExit, (exit) => this.inner.start(spec, exit));
  }

  private watch(
    a: { jobId: string; attempt: number },
    onExit: (result: ExecutionResult) => void,
    run: (exit: (r: ExecutionResult) => void) => Execution,
  ): Execution {
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      this.logs.finished(a.jobId, a.attempt);
    };
    this.logs.started(a.jobId, a.attempt);
    try {
      return run((result) => {
        end();
        onExit(result);
      });
    } catch (err) {
      end();
      throw err;
    }
  }
}
