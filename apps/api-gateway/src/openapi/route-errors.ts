/**
 * Which problem statuses each operation can answer, beyond those every authenticated operation can
 * (401, 429, 500, 503) and those its shape implies (400 with parameters or a body, 404 with a path
 * parameter, 413 with a body, 403 with a role restriction). Keyed by operationId, so that adding a
 * route needs no entry unless it has an error of its own.
 */
export const EXTRA_PROBLEMS: Readonly<Record<string, readonly number[]>> = {
  // a user asking for owner= someone else
  'jobs.list': [403],
  // unknown queue; an Idempotency-Key reused with another body
  'jobs.create': [422],
  // a queue name that is taken
  'queues.create': [409],
};

/** Statuses every operation behind the bearer guard can answer. */
export const AUTHENTICATED_PROBLEMS = [401, 429, 500, 503] as const;
