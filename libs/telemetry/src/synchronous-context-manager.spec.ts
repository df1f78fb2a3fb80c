import { ROOT_CONTEXT, createContextKey } from '@opentelemetry/api';
import { SynchronousContextManager } from './synchronous-context-manager';

const KEY = createContextKey('test');
const withValue = (v: string) => ROOT_CONTEXT.setValue(KEY, v);

describe('SynchronousContextManager', () => {
  it('makes a context active while the function runs, nested scopes included, and restores it after', () => {
    const m = new SynchronousContextManager().enable();
    const seen: unknown[] = [];
    const result = m.with(
      withValue('outer'),
      (x: number) => {
        seen.push(m.active().getValue(KEY));
        m.with(withValue('inner'), () => seen.push(m.active().getValue(KEY)));
        seen.push(m.active().getValue(KEY));
        return x * 2;
      },
      undefined,
      21,
    );
    expect(result).toBe(42);
    expect(seen).toEqual(['outer', 'inner', 'outer']);
    expect(m.active()).toBe(ROOT_CONTEXT);
  });

  it('restores the outer context when the function throws', () => {
    const m = new SynchronousContextManager().enable();
    expect(() =>
      m.with(withValue('doomed'), () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(m.active()).toBe(ROOT_CONTEXT);
  });

  it('passes thisArg through', () => {
    const m = new SynchronousContextManager().enable();
    const holder = {
      n: 7,
      get(this: { n: number }) {
        return this.n;
      },
    };
    expect(m.with(ROOT_CONTEXT, holder.get, holder)).toBe(7);
  });

  it('does not carry a context into a promise continuation (synchronous scopes only)', async () => {
    const m = new SynchronousContextManager().enable();
    const later = m.with(withValue('sync'), async () => {
      await Promise.resolve();
      return m.active().getValue(KEY);
    });
    expect(await later).toBeUndefined();
  });

  it('binds a function to a context for whenever it is called, and leaves other values alone', () => {
    const m = new SynchronousContextManager().enable();
    const bound = m.bind(withValue('bound'), (suffix: string) => `${String(m.active().getValue(KEY))}${suffix}`);
    expect(bound('!')).toBe('bound!');
    expect(m.active()).toBe(ROOT_CONTEXT);
    const notAFunction = { a: 1 };
    expect(m.bind(withValue('x'), notAFunction)).toBe(notAFunction);
  });
});
