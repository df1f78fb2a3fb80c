import type { INestApplication, Type } from '@nestjs/common';
import { METHOD_METADATA } from '@nestjs/common/constants';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject, ParameterObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { validationMetadatasToSchemas } from 'class-validator-jsonschema';
import { ROLES_KEY } from '../auth/roles.decorator';
import { PROBLEM_DESCRIPTIONS, PROBLEM_SCHEMA } from './problem.schema';
import { AUTHENTICATED_PROBLEMS, EXTRA_PROBLEMS } from './route-errors';

/** `JobsController.create` -> `jobs.create`: stable as long as the handler keeps its name. */
export function operationIdOf(controllerKey: string, methodKey: string): string {
  const resource = controllerKey.replace(/Controller$/, '');
  return `${resource.charAt(0).toLowerCase()}${resource.slice(1)}.${methodKey}`;
}

const INT32_MAX = 2 ** 31 - 1;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** Constraint keywords that the validation decorators carry and the document should state. */
const CONSTRAINTS = [
  'minLength',
  'maxLength',
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'enum',
] as const;

interface HandlerFacts {
  roles: string[] | undefined;
  /** Classes of the handler's parameters (a query DTO's constraints go to its query parameters). */
  paramTypes: Array<{ name: string }>;
}

/**
 * The OpenAPI document of the gateway: Nest's, from the controllers and DTO decorators, then one
 * pass that adds what every route shares (ADR 0014): opaque bearer auth, the problem+json error
 * responses each route can answer, the rate-limit headers, and the limits that the class-validator
 * decorators enforce (so a limit is written once, where it is checked).
 */
export function buildOpenApiDocument(app: INestApplication, controllers: ReadonlyArray<Type<unknown>>): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Gantry API')
    .setDescription(
      'The REST API of Gantry, a control plane for GPU clusters (public contract v2). Errors are RFC 9457 ' +
        'application/problem+json. Every answer to an authenticated call carries RateLimit-Limit and ' +
        'RateLimit-Remaining; 429 and 503 carry Retry-After (seconds).',
    )
    .setVersion('2')
    .setLicense('Apache-2.0', 'https://www.apache.org/licenses/LICENSE-2.0')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque',
        description: 'An opaque token (`gnt_` and 43 base64url characters, or the admin token) with nothing inside to decode; only its hash is stored',
      },
      'bearer',
    )
    .addSecurity('nodeSignature', {
      type: 'apiKey',
      in: 'header',
      name: 'gantry-signature',
      description:
        "A node's proof of its credential (ADR 0034): `v1=` + lowercase hex of HMAC-SHA256 under the credential, over what the operation says; each signature accepted once",
    })
    .build();
  const doc = SwaggerModule.createDocument(app, config, { operationIdFactory: operationIdOf });
  finishDocument(doc, handlerFacts(controllers));
  return doc;
}

function handlerFacts(controllers: ReadonlyArray<Type<unknown>>): Map<string, HandlerFacts> {
  const facts = new Map<string, HandlerFacts>();
  for (const c of controllers) {
    const classRoles = Reflect.getMetadata(ROLES_KEY, c) as string[] | undefined;
    for (const name of Object.getOwnPropertyNames(c.prototype)) {
      const handler = c.prototype[name];
      if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
      // An id given with @ApiOperation wins over the derived one, as it does in the document.
      const explicit = (Reflect.getMetadata('swagger/apiOperation', handler) as { operationId?: string } | undefined)?.operationId;
      facts.set(explicit ?? operationIdOf(c.name, name), {
        roles: (Reflect.getMetadata(ROLES_KEY, handler) as string[] | undefined) ?? classRoles,
        paramTypes: (Reflect.getMetadata('design:paramtypes', c.prototype, name) as Array<{ name: string }> | undefined) ?? [],
      });
    }
  }
  return facts;
}

function finishDocument(doc: OpenAPIObject, facts: Map<string, HandlerFacts>): void {
  const components = (doc.components ??= {});
  const schemas = (components.schemas ??= {});
  schemas.Problem = PROBLEM_SCHEMA;
  components.headers = {
    'RateLimit-Limit': {
      description: "Requests per second the token's budget refills (contract §4.3)",
      schema: { type: 'integer', format: 'int32', minimum: 0, maximum: INT32_MAX },
    },
    'RateLimit-Remaining': {
      description: "Requests left in the token's budget now",
      schema: { type: 'integer', format: 'int32', minimum: 0, maximum: INT32_MAX },
    },
    'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', format: 'int32', minimum: 0, maximum: INT32_MAX } },
  };
  const validation = validationMetadatasToSchemas({ refPointerPrefix: '#/components/schemas/' }) as Record<string, SchemaObject>;
  for (const [name, schema] of Object.entries(schemas)) if (validation[name]) mergeConstraints(schema as SchemaObject, validation[name]);

  forEachSchema(doc, (schema) => {
    // Every integer says how wide it is: int32 unless its bounds need more.
    if (schema.type === 'integer' && !schema.format)
      schema.format = schema.maximum !== undefined && schema.maximum <= INT32_MAX && (schema.minimum ?? 0) >= -INT32_MAX - 1 ? 'int32' : 'int64';
  });

  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of HTTP_METHODS) {
      const op = item[method] as OperationObject | undefined;
      if (!op) continue;
      const fact = op.operationId ? facts.get(op.operationId) : undefined;
      if (!fact) throw new Error(`OpenAPI: no handler found for operation ${op.operationId ?? `${method} ${path}`}`);
      // A node's own routes carry their scheme (@ApiSecurity); every other is behind the bearer token.
      if (!op.security?.some((s) => 'nodeSignature' in s)) op.security = [{ bearer: [] }];
      for (const type of fact.paramTypes) {
        const v = validation[type.name];
        if (!v?.properties) continue;
        for (const p of (op.parameters ?? []) as ParameterObject[]) {
          if (p.in === 'query' && v.properties[p.name] && p.schema) mergeConstraints(p.schema as SchemaObject, v.properties[p.name] as SchemaObject);
        }
      }
      for (const p of (op.parameters ?? []) as ParameterObject[]) {
        // Path segments: a node id is at most 253 characters (the router's limit is 1024).
        if (p.in === 'path' && p.schema && !(p.schema as SchemaObject).maxLength) (p.schema as SchemaObject).maxLength = 253;
      }
      const statuses = new Set<number>([...AUTHENTICATED_PROBLEMS, ...(EXTRA_PROBLEMS[op.operationId!] ?? [])]);
      if ((op.parameters?.length ?? 0) > 0 || op.requestBody) statuses.add(400);
      if (path.includes('{')) statuses.add(404);
      if (op.requestBody) statuses.add(413);
      if (fact.roles) statuses.add(403);
      for (const status of [...statuses].sort()) {
        op.responses[status] ??= {
          description: PROBLEM_DESCRIPTIONS[status] ?? 'Error',
          content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
        };
      }
      for (const [status, response] of Object.entries(op.responses) as Array<[string, ResponseObject]>) {
        const headers = (response.headers ??= {});
        headers['RateLimit-Limit'] = { $ref: '#/components/headers/RateLimit-Limit' } as ReferenceObject;
        headers['RateLimit-Remaining'] = { $ref: '#/components/headers/RateLimit-Remaining' } as ReferenceObject;
        if (status === '429' || status === '503') headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' } as ReferenceObject;
        for (const media of Object.values(response.content ?? {})) {
          // Problems are their own media type; Nest lists every response under application/json.
          if (Number(status) >= 400 && response.content?.['application/json']) {
            response.content = { 'application/problem+json': media };
            break;
          }
        }
      }
    }
  }
}

/** Visits every inline schema of the document (components, parameters, bodies, responses, headers), depth first. */
function forEachSchema(doc: OpenAPIObject, visit: (s: SchemaObject) => void): void {
  const seen = new Set<object>();
  const walk = (node: unknown, isSchema: boolean): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (isSchema) visit(node as SchemaObject);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example' || key === 'examples' || key === 'default' || key === 'enum') continue;
      const childIsSchema =
        key === 'schema' || key === 'items' || key === 'additionalProperties' || (isSchema && ['allOf', 'anyOf', 'oneOf', 'not'].includes(key));
      if (isSchema && key === 'properties') for (const p of Object.values(value as object)) walk(p, true);
      else if (Array.isArray(value)) for (const v of value) walk(v, childIsSchema);
      else walk(value, childIsSchema || (key !== 'properties' && doc.components?.schemas === node));
    }
  };
  walk(doc, false);
}

/** Copies the validation limits into a schema, each where the schema does not already say it. */
function mergeConstraints(target: SchemaObject, from: SchemaObject): void {
  for (const key of CONSTRAINTS) {
    if (from[key] !== undefined && target[key] === undefined && !(target as ReferenceObject).$ref) (target as Record<string, unknown>)[key] = from[key];
  }
  if (!from.properties || !target.properties) return;
  for (const [prop, schema] of Object.entries(target.properties)) {
    const v = from.properties[prop] as SchemaObject | undefined;
    if (!v || (schema as ReferenceObject).$ref) continue;
    mergeConstraints(schema as SchemaObject, v);
    const items = (schema as SchemaObject).items as SchemaObject | undefined;
    if (items && !(items as ReferenceObject).$ref && v.items) mergeConstraints(items, v.items as SchemaObject);
  }
}
