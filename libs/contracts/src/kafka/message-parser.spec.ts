import { Type } from '@sinclair/typebox';
import { OpenObject, OrNull, Text } from './field-schemas';
import { messageParser } from './message-parser';
import { openApiSchema } from './openapi-schema';

const parse = messageParser(OpenObject({ name: Text({ minLength: 2, maxLength: 4 }), note: Type.Optional(OrNull(Text())) }));
const buf = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('messageParser: text fields', () => {
  it.each<[string, string, boolean]>([
    ['within bounds', 'abc', true],
    ['at the minimum', 'ab', true],
    ['at the maximum', 'abcd', true],
    ['below the minimum', 'a', false],
    ['above the maximum', 'abcde', false],
    ['four characters outside the BMP (eight UTF-16 units): counted as characters', '\u{1F600}\u{1F600}\u{1F600}\u{1F600}', true],
    ['five of them', '\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}', false],
    ['one of them (two units) is one character: below the minimum', '\u{1F600}', false],
    ['a NUL', 'a\u0000b', false],
    ['a lone surrogate counts as a character', 'a\uD800', true],
  ])('%s', (_n, name, ok) => expect(parse(buf({ name })).ok).toBe(ok));

  it('says which bounds a text field has', () => {
    expect(parse(buf({ name: 'a' }))).toEqual({ ok: false, reason: 'name: must be 2 to 4 characters, none of them NUL' });
    expect(parse(buf({ name: 'ab', note: 'x\u0000' }))).toEqual({ ok: false, reason: 'note: must not contain the NUL character' });
  });

  it('accepts a string given as text, and refuses no value at all', () => {
    expect(parse('{"name":"abc","note":null}')).toEqual({ ok: true, value: { name: 'abc', note: null } });
    expect(parse(null)).toEqual({ ok: false, reason: 'empty message value' });
  });
});

describe('openApiSchema', () => {
  it('writes a nullable type list and const in OpenAPI 3.0 terms, and leaves the definition as it was', () => {
    const schema = OpenObject({ kind: Type.Literal('RUN'), note: OrNull(Text()) });
    const before = JSON.stringify(schema);
    expect(openApiSchema(schema)).toEqual({
      type: 'object',
      additionalProperties: true,
      required: ['kind', 'note'],
      properties: { kind: { enum: ['RUN'], type: 'string' }, note: { type: 'string', nullable: true, pattern: '^[^\\u0000]*$' } },
    });
    expect(JSON.stringify(schema)).toBe(before);
  });
});
