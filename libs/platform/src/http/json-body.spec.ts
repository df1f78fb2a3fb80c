import Fastify from 'fastify';
import { ApiError, ErrorCode } from './problem';
import { BODY_LIMIT_BYTES, parseJsonBody, useJsonBodies } from './json-body';

const malformed = (text: string | Buffer) => {
  try {
    parseJsonBody(Buffer.isBuffer(text) ? text : Buffer.from(text));
  } catch (e) {
    return e instanceof ApiError && e.code === ErrorCode.MALFORMED_JSON;
  }
  return false;
};

describe('parseJsonBody (as body-parser json() read bodies)', () => {
  it.each<[string, string | Buffer, unknown]>([
    ['an object', '{"a":1}', { a: 1 }],
    ['an array', '[1,2]', [1, 2]],
    ['leading and trailing JSON whitespace', ' \t\r\n{"a":[]} \n', { a: [] }],
    ['an empty body, as {}', '', {}],
    ['a UTF-8 byte order mark', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":"é"}')]), { a: 'é' }],
    ['a __proto__ key, as an own property (the validation pipe strips it)', '{"__proto__":{"x":1}}', JSON.parse('{"__proto__":{"x":1}}')],
  ])('parses %s', (_n, text, expected) => {
    expect(parseJsonBody(Buffer.isBuffer(text) ? text : Buffer.from(text))).toEqual(expected);
  });

  it.each<[string, string]>([
    ['cut-off JSON', '{"name":'],
    ['a number at the top level (strict)', '123'],
    ['a string at the top level (strict)', '"job"'],
    ['null at the top level (strict)', 'null'],
    ['only whitespace', '  \n'],
    ['trailing garbage', '{} x'],
    ['a non-JSON space before the object', '\u00a0{}'],
  ])('refuses %s as malformed JSON (400)', (_n, text) => {
    expect(malformed(text)).toBe(true);
  });
});

describe('useJsonBodies', () => {
  const app = Fastify({ bodyLimit: BODY_LIMIT_BYTES });
  useJsonBodies(app);
  app.post('/echo', async (req) => ({ body: req.body === undefined ? '(none)' : req.body }));
  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, _req, reply) =>
    reply.code(err instanceof ApiError ? err.getStatus() : (err.statusCode ?? 500)).send({ error: err instanceof ApiError ? err.code : err.code }),
  );
  afterAll(() => app.close());

  const post = (contentType: string | undefined, payload: string | Buffer) =>
    app.inject({ method: 'POST', url: '/echo', payload, headers: contentType ? { 'content-type': contentType } : {} });

  it.each<[string, string | undefined, string, number, unknown]>([
    ['application/json', 'application/json', '{"a":1}', 200, { body: { a: 1 } }],
    ['a charset parameter', 'application/json; charset=utf-8', '{"a":1}', 200, { body: { a: 1 } }],
    ['another case', 'Application/JSON', '{"a":1}', 200, { body: { a: 1 } }],
    ['application/*+json', 'application/merge-patch+json', '{"a":1}', 200, { body: { a: 1 } }],
    ['application/*+json with a parameter', 'application/vnd.gantry.v1+json;charset=utf-8', '[1]', 200, { body: [1] }],
    ['an empty JSON body', 'application/json', '', 200, { body: {} }],
    ['malformed JSON', 'application/json', '{"a":', 400, { error: ErrorCode.MALFORMED_JSON }],
    ['malformed application/*+json', 'application/problem+json', 'nope', 400, { error: ErrorCode.MALFORMED_JSON }],
    ['text/plain: left unread', 'text/plain', 'hello', 200, { body: '(none)' }],
    ['a form: left unread', 'application/x-www-form-urlencoded', 'a=1', 200, { body: '(none)' }],
    ['json in another type: left unread', 'application/jsonx', '{"a":1}', 200, { body: '(none)' }],
    ['no content type: left unread', undefined, '{"a":1}', 200, { body: '(none)' }],
  ])('%s', async (_n, contentType, payload, status, body) => {
    const res = await post(contentType, payload);
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body });
  });

  it.each<[string, number, number]>([
    ['exactly the limit: parsed', BODY_LIMIT_BYTES, 200],
    ['one byte over: 413', BODY_LIMIT_BYTES + 1, 413],
  ])('a body of %s', async (_n, size, status) => {
    const filler = 'x'.repeat(size - '{"a":""}'.length);
    const res = await post('application/json', `{"a":"${filler}"}`);
    expect(res.statusCode).toBe(status);
    if (status === 413) expect(res.json()).toEqual({ error: 'FST_ERR_CTP_BODY_TOO_LARGE' });
  });
});
