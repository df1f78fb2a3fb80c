import { Context, ContextManager, ROOT_CONTEXT } from '@opentelemetry/api';

/**
 * A context that lasts while a function given to `with` runs synchronously, and is not carried
 * across callbacks or promises. Enough for what the services do when no span is exported (a
 * consumer handles a message inside its trace context, inConsumerSpan), without AsyncLocalStorage:
 * on Node 20 that turns on async hooks, which then cost something on every promise in the process.
 */
export class SynchronousContextManager implements ContextManager {
  private current: Context = ROOT_CONTEXT;

  active(): Context {
    return this.current;
  }

  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(context: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    const previous = this.current;
    this.current = context;
    try {
      return fn.call(thisArg, ...args);
    } finally {
      this.current = previous;
    }
  }

  bind<T>(context: Context, target: T): T {
    if (typeof target !== 'function') return target;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const manager = this;
    return function (this: unknown, ...args: unknown[]) {
      return manager.with(context, () => (target as (...a: unknown[]) => unknown).apply(this, args));
    } as T;
  }

  enable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }

  disable(): this {
    this.current = ROOT_CONTEXT;
    return this;
  }
}
