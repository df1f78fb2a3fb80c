import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/** RFC 9457 problem details, as every error of the API is answered (libs/platform ProblemDetailsFilter). */
export const PROBLEM_SCHEMA: SchemaObject = {
  type: 'object',
  description: 'RFC 9457 problem details (application/problem+json)',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: {
      type: 'string',
      format: 'uri',
      maxLength: 256,
      description: 'Identifies the kind of problem',
      example: 'https://gantry.dev/problems/validation-failed',
    },
    title: { type: 'string', maxLength: 256, description: 'Short, the same for every problem of this type', example: 'Validation failed' },
    status: { type: 'integer', minimum: 400, maximum: 599, description: 'The HTTP status' },
    detail: { type: 'string', maxLength: 65536, description: 'What went wrong with this request' },
    errors: {
      type: 'array',
      maxItems: 1000,
      description: 'Validation errors, one per bad field',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: {
          field: { type: 'string', maxLength: 1024 },
          message: { type: 'string', maxLength: 4096 },
        },
      },
    },
    errorId: { type: 'string', maxLength: 64, description: 'On a 500: quote it to the operators; the log line has the same id' },
  },
};

/** What each status means on this API, for the responses added to every operation that can answer it. */
export const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: a field, a query parameter, a cursor or the JSON itself (`errors` lists the fields)',
  401: 'Missing, unknown, expired or revoked bearer token',
  403: 'The token is known but its role may not do this',
  404: 'No such resource, or one the caller may not see',
  409: 'Conflicts with the current state (a name that is taken, say)',
  413: 'The request body exceeds 1 MiB',
  422: 'Well-formed but refers to something that does not exist or contradicts an earlier request',
  429: "Over the token's request budget; wait Retry-After seconds",
  500: 'Internal error; `errorId` names the log line',
  503: 'Overloaded or a dependency is away: nothing was done; retry after Retry-After seconds',
};
