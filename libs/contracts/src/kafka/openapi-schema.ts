import { TSchema } from '@sinclair/typebox';

/**
 * A message schema as an OpenAPI 3.0 schema object, for the REST views that show what agents sent
 * (a node's telemetry): the same definition, in the older dialect. `type: [t, 'null']` becomes
 * `nullable`, `const` becomes a one-value `enum`; the rest is JSON Schema that OpenAPI 3.0 shares.
 * Typed loosely on purpose: @nestjs/swagger's own types describe OpenAPI 3.0, not JSON Schema.
 */
export function openApiSchema(schema: TSchema): any {
  return convert(JSON.parse(JSON.stringify(schema)));
}

function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'type' && Array.isArray(v) && v.includes('null')) {
      out.type = v.find((t) => t !== 'null');
      out.nullable = true;
    } else if (k === 'const') {
      out.enum = [v];
    } else if (k === 'properties' || k === 'patternProperties') {
      out[k] = Object.fromEntries(Object.entries(v as object).map(([name, s]) => [name, convert(s)]));
    } else {
      out[k] = convert(v);
    }
  }
  return out;
}
