import { ApiError } from '@gantry/platform';
import { CursorCodec } from './cursor-codec';

const isSeq = (v: unknown): v is { seq: number } => typeof (v as { seq?: unknown })?.seq === 'number';

describe('CursorCodec', () => {
  const codec = new CursorCodec('a-secret-of-enough-length');

  it('round-trips', () => expect(codec.decode(codec.encode({ seq: 7 }), isSeq)).toEqual({ seq: 7 }));

  it.each([
    ['garbage', 'nope'],
    [
      'a flipped body',
      (() => {
        const c = codec.encode({ seq: 7 });
        return 'x' + c.slice(1);
      })(),
    ],
    [
      'a flipped mac',
      (() => {
        const c = codec.encode({ seq: 7 });
        return c.slice(0, -1) + (c.endsWith('A') ? 'B' : 'A');
      })(),
    ],
    ['another key', new CursorCodec('another-secret-of-length').encode({ seq: 7 })],
    ['a wrong shape', codec.encode({ other: 1 })],
    ['extra dots', codec.encode({ seq: 1 }) + '.x'],
  ])('rejects %s', (_n, cursor) => {
    expect(() => codec.decode(cursor, isSeq)).toThrow(ApiError);
  });
});
