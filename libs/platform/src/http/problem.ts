import { HttpException, HttpStatus } from '@nestjs/common';

export interface FieldError {
  field: string;
  message: string;
}

/** RFC 9457 problem details. */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: FieldError[];
  errorId?: string;
}

/** Error codes; each maps to one status and one problem `type` URI. */
export enum ErrorCode {
  VALIDATION_FAILED = 'validation-failed',
  MALFORMED_JSON = 'malformed-json',
  PAYLOAD_TOO_LARGE = 'payload-too-large',
  UNAUTHENTICATED = 'unauthenticated',
  FORBIDDEN = 'forbidden',
  NOT_FOUND = 'not-found',
  CONFLICT = 'conflict',
  UNPROCESSABLE = 'unprocessable',
  INVALID_CURSOR = 'invalid-cursor',
  RATE_LIMITED = 'rate-limited',
  INTERNAL = 'internal',
  UNAVAILABLE = 'unavailable',
}

const STATUS: Record<ErrorCode, [number, string]> = {
  [ErrorCode.VALIDATION_FAILED]: [HttpStatus.BAD_REQUEST, 'Validation failed'],
  [ErrorCode.MALFORMED_JSON]: [HttpStatus.BAD_REQUEST, 'Malformed JSON'],
  [ErrorCode.PAYLOAD_TOO_LARGE]: [HttpStatus.PAYLOAD_TOO_LARGE, 'Payload too large'],
  [ErrorCode.UNAUTHENTICATED]: [HttpStatus.UNAUTHORIZED, 'Unauthenticated'],
  [ErrorCode.FORBIDDEN]: [HttpStatus.FORBIDDEN, 'Forbidden'],
  [ErrorCode.NOT_FOUND]: [HttpStatus.NOT_FOUND, 'Not found'],
  [ErrorCode.CONFLICT]: [HttpStatus.CONFLICT, 'Conflict'],
  [ErrorCode.UNPROCESSABLE]: [HttpStatus.UNPROCESSABLE_ENTITY, 'Unprocessable request'],
  [ErrorCode.INVALID_CURSOR]: [HttpStatus.BAD_REQUEST, 'Invalid cursor'],
  [ErrorCode.RATE_LIMITED]: [HttpStatus.TOO_MANY_REQUESTS, 'Too many requests'],
  [ErrorCode.INTERNAL]: [HttpStatus.INTERNAL_SERVER_ERROR, 'Internal error'],
  [ErrorCode.UNAVAILABLE]: [HttpStatus.SERVICE_UNAVAILABLE, 'Service unavailable'],
};

export const PROBLEM_TYPE_BASE = 'https://gantry.dev/problems/';

export function problemFor(code: ErrorCode, detail: string, errors?: FieldError[]): ProblemDetails {
  const [status, title] = STATUS[code];
  return { type: `${PROBLEM_TYPE_BASE}${code}`, title, status, detail, ...(errors ? { errors } : {}) };
}

/** Thrown by controllers and services; the global filter renders it as problem+json. */
export class ApiError extends HttpException {
  /** Response headers that go with the problem (`Retry-After` on a 429 or 503). */
  readonly headers: Record<string, string> = {};

  constructor(
    readonly code: ErrorCode,
    detail: string,
    readonly fieldErrors?: FieldError[],
  ) {
    super(problemFor(code, detail, fieldErrors), STATUS[code][0]);
  }

  /** Adds `Retry-After` in whole seconds (at least 1): when trying again may succeed. */
  retryAfter(seconds: number): this {
    this.headers['retry-after'] = String(Math.max(1, Math.ceil(seconds)));
    return this;
  }
}
