import Ajv2020, { ErrorObject, KeywordCxt, ValidateFunction, _ } from 'ajv/dist/2020';
import ucs2length from 'ajv/dist/runtime/ucs2length';
import { Static, TSchema } from '@sinclair/typebox';
import { DROPS_UNKNOWN, NO_NUL } from './field-schemas';

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };
export type MessageParser<T> = (raw: Buffer | string | null) => ParseResult<T>;

/*
 * One validator per message, compiled from its schema to JavaScript once at start-up (ajv, JSON
 * Schema 2020-12, the dialect of OpenAPI 3.1): the fast path is the only path. How it is compiled
 * changes nothing the published schema says, only what it costs (bench:parsers, ADR 0013):
 * - Unknown fields are allowed (contract section 3: ignored). A StoredObject's are removed in place
 *   (compiled as `additionalProperties: false` with `removeAdditional: true`), so nothing stores or
 *   shows them; any other object's are left where they are, unread (removing them costs a loop over
 *   every key, ADR 0013). A map (env) keeps every entry.
 * - `discriminator` picks a command's RUN or KILL branch by its `type` and checks only that one.
 * - Text fields (`pattern: NO_NUL` with their lengths) are compiled to one inline check, `text`, on
 *   `.length`, counting code points (as JSON Schema does) only when the UTF-16 length cannot decide.
 * - No string can hold a NUL unless the JSON text holds the escape `\u0000` (JSON has no other way
 *   to write U+0000): the bytes are searched for it once, and only a message that has it is checked
 *   string by string. ajv's own pattern and length keywords (a regular expression and a code point
 *   count per string) cost more than the rest of a message's validation.
 * - The verdict stops at the first broken rule; a refused message is validated again with every
 *   rule, to name them all in its dead-letter reason.
 * - The patterns left (node ids) are ASCII classes: compiled without the `u` flag, as they always were.
 */
const OPTIONS = { removeAdditional: true, discriminator: true, strict: true, allowUnionTypes: true, unicodeRegExp: false } as const;
const verdicts = withTextRule(new Ajv2020({ ...OPTIONS, allErrors: false }));
const explanations = withTextRule(new Ajv2020({ ...OPTIONS, allErrors: true }));

/**
 * What a validator is called with for a whole message. Given, not left to the validator's defaults,
 * which would allocate two objects per call; rootData is left to default to the message itself.
 */
const TOP_LEVEL = Object.freeze({ instancePath: '', dynamicAnchors: Object.freeze({}) }) as unknown as Parameters<ValidateFunction>[1];

/** How JSON writes U+0000 (the only way it can). */
const NUL_ESCAPE = '\\u0000';

interface TextRule {
  min: number;
  /** null: no maximum. */
  max: number | null;
  /** Whether to look for NUL (only in a message whose JSON text holds NUL_ESCAPE). */
  nul: boolean;
}

function describeText({ min, max }: TextRule): string {
  if (min === 0 && max === null) return 'must not contain the NUL character';
  const size = max === null ? `at least ${min}` : min === 0 ? `at most ${max}` : min === max ? `exactly ${min}` : `${min} to ${max}`;
  return `must be ${size} characters, none of them NUL`;
}

/** Adds the `text` keyword: a string of bounded length (and, where asked, without NUL) in one inline check. */
function withTextRule(ajv: Ajv2020): Ajv2020 {
  return ajv.addKeyword({
    keyword: 'text',
    type: 'string',
    schemaType: 'object',
    error: { message: (cxt) => describeText(cxt.schema as TextRule) },
    code(cxt: KeywordCxt) {
      const { data, gen } = cxt;
      const { min, max, nul } = cxt.schema as TextRule;
      const codePoints = gen.scopeValue('func', { ref: ucs2length, code: _`require("ajv/dist/runtime/ucs2length").default` });
      // Code points are at most the UTF-16 length and at least half of it.
      let broken = _`${data}.length < ${min}`;
      if (nul) broken = _`${data}.includes("\\u0000") || ${broken}`;
      if (min > 1) broken = _`${broken} || (${data}.length < ${2 * min} && ${codePoints}(${data}) < ${min})`;
      if (max !== null) broken = _`${broken} || (${data}.length > ${max} && ${codePoints}(${data}) > ${max})`;
      cxt.fail(broken);
    },
  });
}

/** The schema as compiled (see above): every NUL-free text field (and key rule) as one `text` rule, unknown fields dropped only where stored. */
function forCompilation(node: unknown, nul: boolean): unknown {
  if (Array.isArray(node)) return node.map((n) => forCompilation(n, nul));
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([n, s]) => [n, forCompilation(s, nul)])) : forCompilation(v, nul);
  }
  if (out.additionalProperties === true) {
    if ((node as { [DROPS_UNKNOWN]?: boolean })[DROPS_UNKNOWN]) out.additionalProperties = false;
    else delete out.additionalProperties;
  }
  if (out.pattern === NO_NUL) {
    out.text = { min: (out.minLength as number | undefined) ?? 0, max: (out.maxLength as number | undefined) ?? null, nul } satisfies TextRule;
    delete out.pattern;
    delete out.minLength;
    delete out.maxLength;
  }
  return out;
}

/** The values a discriminated schema's tag may take (`type`: RUN, KILL), for its failure reason. */
function tagValues(schema: TSchema): string[] {
  const tag = (schema.discriminator as { propertyName: string } | undefined)?.propertyName;
  return tag ? ((schema.oneOf ?? []) as TSchema[]).map((s) => String(s.properties?.[tag]?.const)) : [];
}

/** The reason a dead letter carries: every broken rule, each as `field: rule` (`gpus[0].utilization: must be <= 1`). */
function reasonOf(errors: ErrorObject[], tags: string[]): string {
  const lines = errors.map((e) => {
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
      .join('')
      .replace(/^\./, '');
    const field = (name: string) => (path ? `${path}.${name}` : name);
    const params = e.params as Record<string, unknown>;
    if (e.keyword === 'required') return `${field(String(params.missingProperty))}: is required`;
    if (e.keyword === 'discriminator') return `${field(String(params.tag))}: must be one of ${tags.join(', ')}`;
    if (e.keyword === 'enum') return `${path}: must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    if (e.keyword === 'propertyNames') return '';
    if (e.propertyName !== undefined) return `${path || '(message)'}: key ${JSON.stringify(e.propertyName)} ${e.message}`;
    return `${path || '(message)'}: ${e.message}`;
  });
  return [...new Set(lines.filter((l) => l !== ''))].join('; ').slice(0, 2000);
}

/**
 * The parser of one message type: JSON, then the compiled schema. A message that fails gives a
 * reason fit for the dead-letter topic; nothing throws. The value returned is JSON.parse's own
 * (a StoredObject's unknown fields removed).
 */
export function messageParser<S extends TSchema>(schema: S): MessageParser<Static<S>> {
  const check = branchChecks(schema);
  let explain: ValidateFunction | null = null;
  const tags = tagValues(schema);
  return (raw) => {
    if (raw === null) return { ok: false, reason: 'empty message value' };
    const text = typeof raw === 'string' ? raw : raw.toString('utf8');
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      return { ok: false, reason: `invalid JSON: ${(e as Error).message}` };
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return { ok: false, reason: 'message value must be a JSON object' };
    if (check(data as Record<string, unknown>, text.includes(NUL_ESCAPE))) return { ok: true, value: data as Static<S> };
    explain ??= explanations.compile(forCompilation(schema, true) as object);
    explain(data);
    return { ok: false, reason: reasonOf(explain.errors ?? [], tags) };
  };
}

/**
 * The verdict for one message, with or without the NUL checks. A schema discriminated by a tag
 * (commands: `type`) is compiled branch by branch and the message's tag picks the branch, which is
 * what ajv's discriminator does, less its bookkeeping (a tenth of a KILL's parse).
 */
function branchChecks(schema: TSchema): (data: Record<string, unknown>, nul: boolean) => boolean {
  const compile = (s: unknown) => ({
    plain: verdicts.compile(forCompilation(s, false) as object),
    withNul: verdicts.compile(forCompilation(s, true) as object),
  });
  const tag = (schema.discriminator as { propertyName: string } | undefined)?.propertyName;
  if (!tag) {
    const whole = compile(schema);
    return (data, nul) => (nul ? whole.withNul : whole.plain)(data, TOP_LEVEL);
  }
  const branches = new Map(((schema.oneOf ?? []) as TSchema[]).map((b) => [b.properties?.[tag]?.const as unknown, compile(b)]));
  return (data, nul) => {
    const branch = branches.get(data[tag]);
    return branch !== undefined && (nul ? branch.withNul : branch.plain)(data, TOP_LEVEL);
  };
}
