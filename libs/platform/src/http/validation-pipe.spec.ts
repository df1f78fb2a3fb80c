import { IsInt } from 'class-validator';
import { ApiError } from './problem';
import { FastValidator, createValidationPipe } from './validation-pipe';

class CountDto {
  @IsInt()
  n!: number;
}

/** Takes `{n: 1}` only, and says so by returning a marked instance. */
const fastOne: FastValidator = (v) => ((v as { n?: unknown })?.n === 1 ? Object.assign(new CountDto(), { n: 1, viaFastPath: true }) : null);
const pipe = createValidationPipe(new Map([[CountDto, fastOne]]));

describe('createValidationPipe with fast paths', () => {
  it.each<[string, unknown, 'body' | 'query', unknown]>([
    ['a body the fast path accepts: its instance', { n: 1 }, 'body', { n: 1, viaFastPath: true }],
    ['a body it declines and the class accepts: the class instance', { n: 2 }, 'body', { n: 2 }],
    ['a body it declines and the class refuses: the 400', { n: 'x' }, 'body', 'rejected'],
    ['an unknown field it would not see: the class still refuses', { n: 2, extra: 1 }, 'body', 'rejected'],
    ['a query of the same type: the class, never the fast path', { n: 1 }, 'query', { n: 1 }],
  ])('%s', async (_name, value, type, expected) => {
    const result = await pipe.transform(value, { type, metatype: CountDto, data: undefined }).catch((e: unknown) => {
      expect(e).toBeInstanceOf(ApiError);
      return 'rejected';
    });
    if (expected === 'rejected') expect(result).toBe('rejected');
    else {
      expect(result).toBeInstanceOf(CountDto);
      expect({ ...(result as object) }).toEqual(expected);
    }
  });
});
