import { BODY_SHAPE_LIMITS, checkBodyShape } from './body-shape';
import { ApiError } from './problem';

const verdict = (body: unknown): string | null => {
  try {
    checkBodyShape(body);
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    expect((e as ApiError).getStatus()).toBe(400);
    return (e as ApiError).fieldErrors![0].field + ': ' + (e as ApiError).fieldErrors![0].message;
  }
};

const nest = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

describe('checkBodyShape', () => {
  it.each<[string, unknown, string | null]>([
    ['a job body', { name: 'n', command: ['a', 'b'], env: { A: '1' }, resources: { gpus: 1 } }, null],
    ['an empty object', {}, null],
    ['the deepest body allowed', nest(BODY_SHAPE_LIMITS.maxDepth), null],
    ['one level deeper', nest(BODY_SHAPE_LIMITS.maxDepth + 1), /nests deeper than 32 levels$/.source],
    ['the most keys allowed in one object', Object.fromEntries(Array.from({ length: BODY_SHAPE_LIMITS.maxKeysPerObject }, (_, i) => [`k${i}`, i])), null],
    [
      'one key more, nested',
      { env: Object.fromEntries(Array.from({ length: BODY_SHAPE_LIMITS.maxKeysPerObject + 1 }, (_, i) => [`k${i}`, i])) },
      'env: has more than 1024 keys',
    ],
    ['a NUL in a nested string', { command: ['ok', 'a\u0000b'] }, 'command[1]: must not contain a NUL character'],
    ['a NUL in a key', { env: { 'A\u0000': 'x' } }, 'env.A\u0000: a key must not contain a NUL character'],
    ['a NUL in a top-level string', { name: '\u0000' }, 'name: must not contain a NUL character'],
    ['other control characters', { name: '\u0001\u001f' }, null],
  ])('%s', (_n, body, expected) => {
    const got = verdict(body);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toMatch(new RegExp(expected.replace(/[[\]]/g, '\\$&')));
  });

  it('answers a 500,000-deep body and 60,000 keys in bounded time', () => {
    const deep = JSON.parse('['.repeat(500_000) + ']'.repeat(500_000));
    const wide = Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i]));
    const t0 = process.hrtime.bigint();
    expect(verdict(deep)).toMatch(/nests deeper/);
    expect(verdict(wide)).toMatch(/more than 1024 keys/);
    expect(Number(process.hrtime.bigint() - t0) / 1e6).toBeLessThan(1000);
  });
});
