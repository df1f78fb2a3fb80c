import Ajv2020, { ErrorObject, KeywordCxt, ValidateFunction, _ } from 'ajv/dist/2020';
import ucs2length from 'ajv/dist/runtime/ucs2length';
import { Static, TSchema } from '@sinclair/typebox';
import { NO_NUL } from './field-schemas';

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };
export type MessageParser<T> = (raw: Buffer | string | null) => ParseResult<T>;

/*
 * One validator per message, compiled from its schema to JavaScript once at start-up (ajv, JSON
 * Schema 2020-12, the dialect of OpenAPI 3.1): the fast path is the only path.
 * - An object that allows unknown fields (contract section 3: ignored; `additionalProperties: true`
 *   in the published schema) is compiled as one that forbids them, with `removeAdditional: true`:
 *   the parser drops them, in place, as class-validator's whitelist did, and nothing downstream
 *   stores or shows them. A map (env) names its values' schema instead, and keeps every entry.
 * - `discriminator` picks a command's RUN or KILL branch by its `type` and checks only that one.
 * - Text fields (`pattern: NO_NUL` with their lengths) are compiled to one inline check, `text`:
 *   `includes('\0')` and `.length`, counting code points (as JSON Schema does) only when the UTF-16
 *   length is not conclusive. Done by ajv's own pattern and length keywords, a regular expression
 *   and a code point count per string cost more than the rest of a message's validation (bench:parsers).
 *   The published schema keeps the standard keywords; this changes only how they are run.
 * - The patterns left (node ids) are ASCII classes: compiled without the `u` flag, as they always were.
 */
const OPTIONS = { removeAdditional: true, discriminator: true, strict: true, allowUnionTypes: true, unicodeRegExp: false } as const;
/** Gives the verdict: stops at the first broken rule (the common case, a valid message, is checked in full either way). */
const verdicts = withTextRule(new Ajv2020({ ...OPTIONS, allErrors: false }));
/** Run only on a message the first refused: names every broken rule for the dead letter. */
const explanations = withTextRule(new Ajv2020({ ...OPTIONS, allErrors: true }));

interface TextRule {
  min: number;
  /** null: no maximum. */
  max: number | null;
}

function describeText({ min, max }: TextRule): string {
  if (min === 0 && max === null) return 'must not contain the NUL character';
  const size = max === null ? `at least ${min}` : min === 0 ? `at most ${max}` : min === max ? `exactly ${min}` : `${min} to ${max}`;
  return `must be ${size} characters, none of them NUL`;
}

/** Adds the `text` keyword: a NUL-free string of bounded length, in one inline check (see above). */
function withTextRule(ajv: Ajv2020): Ajv2020 {
  return ajv.addKeyword({
    keyword: 'text',
    type: 'string',
    schemaType: 'object',
    error: { message: (cxt) => describeText(cxt.schema as TextRule) },
    code(cxt: KeywordCxt) {
      const { data, gen } = cxt;
      const { min, max } = cxt.schema as TextRule;
      const codePoints = gen.scopeValue('func', { ref: ucs2length, code: _`require("ajv/dist/runtime/ucs2length").default` });
      // Code points are at most the UTF-16 length and at least half of it.
      let broken = _`${data}.includes("\\u0000") || ${data}.length < ${min}`;
      if (min > 1) broken = _`${broken} || (${data}.length < ${2 * min} && ${codePoints}(${data}) < ${min})`;
      if (max !== null) broken = _`${broken} || (${data}.length > ${max} && ${codePoints}(${data}) > ${max})`;
      cxt.fail(broken);
    },
  });
}

/** The schema as compiled: unknown fields removed, every NUL-free text field (and key rule) as one `text` rule; the rest as written. */
function forCompilation(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(forCompilation);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = k === 'properties' || k === 'patternProperties' ? Object.fromEntries(Object.entries(v as object).map(([n, s]) => [n, forCompilation(s)])) : forCompilation(v);
  }
  if (out.additionalProperties === true) out.additionalProperties = false;
  if (out.pattern === NO_NUL) {
    out.text = { min: (out.minLength as number | undefined) ?? 0, max: (out.maxLength as number | undefined) ?? null } satisfies TextRule;
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
    const path = e.instancePath.split('/').slice(1).map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`)).join('').replace(/^\./, '');
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
 * reason fit for the dead-letter topic; nothing throws. The value returned is JSON.parse's own,
 * with unknown fields removed.
 */
export function messageParser<S extends TSchema>(schema: S): MessageParser<Static<S>> {
  const compiled = forCompilation(schema) as object;
  const validate: ValidateFunction = verdicts.compile(compiled);
  let explain: ValidateFunction | null = null;
  const tags = tagValues(schema);
  return (raw) => {
    if (raw === null) return { ok: false, reason: 'empty message value' };
    let data: unknown;
    try {
      data = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
    } catch (e) {
      return { ok: false, reason: `invalid JSON: ${(e as Error).message}` };
    }
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return { ok: false, reason: 'message value must be a JSON object' };
    if (validate(data)) return { ok: true, value: data as Static<S> };
    explain ??= explanations.compile(compiled);
    explain(data);
    return { ok: false, reason: reasonOf(explain.errors ?? validate.errors ?? [], tags) };
  };
}
