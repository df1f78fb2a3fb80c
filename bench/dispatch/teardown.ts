/**
 * Everything the bench starts is registered here and stopped in reverse: on success, on failure,
 * and on Ctrl-C (a second Ctrl-C kills the services instead of waiting for their graceful stop).
 */
import { killRunningCommands } from '@gantry/stack';
import { stopLoad } from '../api/load';
import { stopOpenLoop } from '../api/open-loop';

interface Step {
  what: string;
  fn: () => Promise<void>;
}

export class Teardown {
  private readonly steps: Step[] = [];
  private running: Promise<void> | null = null;
  interrupted = false;

  constructor(
    private readonly say: (msg: string) => void,
    private readonly onForce: () => void,
  ) {}

  add(what: string, fn: () => Promise<void>): void {
    this.steps.push({ what, fn });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      try {
        stopLoad();
        stopOpenLoop();
        killRunningCommands();
      } catch (e) {
        this.say(`could not stop the load or a child: ${(e as Error).message}`);
      }
      while (this.steps.length) {
        const { what, fn } = this.steps.pop()!;
        this.say(`stopping ${what}`);
        await fn().catch((e) => this.say(`could not stop ${what}: ${(e as Error).message}`));
      }
    })();
    return this.running;
  }

  /** Signals and crashes tear everything down before the process exits. */
  installHandlers(): void {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.on(signal, () => {
        if (this.interrupted) {
          this.say(`${signal} again: killing`);
          this.onForce();
          process.exit(130);
        }
        this.interrupted = true;
        this.say(`${signal}: stopping everything (again to force)`);
        void this.run().finally(() => process.exit(130));
      });
    }
    let fatal = false;
    for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
      process.on(event, (e: unknown) => {
        if (fatal) return; // already stopping: don't report (or loop on) follow-on failures
        fatal = true;
        this.say(`${event}: ${(e as Error)?.stack ?? e}`);
        void this.run().finally(() => process.exit(1));
      });
    }
  }

  check(): void {
    if (this.interrupted) throw new Error('interrupted');
  }

  /** Runs the bench's main, then tears down; exits 0, 1 on failure, 130 when interrupted. */
  runMain(main: () => Promise<void>): void {
    main()
      .then(() => this.run())
      .then(() => process.exit(0))
      .catch(async (e) => {
        this.say(this.interrupted ? 'interrupted' : `failed: ${(e as Error).stack ?? e}`);
        await this.run();
        process.exit(this.interrupted ? 130 : 1);
      });
  }
}
