import { ApiError, ErrorCode } from './problem';

/**
 * Bounds on the shape of every JSON request body, checked right after parsing and before anything
 * walks it (class-transformer recurses per level and de-duplicates an object's keys in quadratic
 * time; ADR 0017 has the figures). No Gantry body is deeper than a few levels or has more than a
 * few hundred keys in one object.
 */
export const BODY_SHAPE_LIMITS = {
  maxDepth: 32,
  maxKeysPerObject: 1024,
} as const;

/**
 * Throws the 400 problem when `body` nests deeper than maxDepth, has an object with more than
 * maxKeysPerObject keys, or holds a NUL character in any string or key (contract §4.2: nothing
 * Gantry stores can hold one; Postgres text and jsonb refuse it). One pass, at most maxDepth deep.
 */
export function checkBodyShape(body: unknown): void {
  const path: Array<string | number> = [];
  const fail = (message: string): never => {
    const field = path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('') || '(body)';
    throw new ApiError(ErrorCode.VALIDATION_FAILED, `${field}: ${message}`, [{ field, message }]);
  };
  const walk = (v: unknown, depth: number): void => {
    if (typeof v === 'string') {
      if (v.includes('\0')) fail('must not contain a NUL character');
      return;
    }
    if (typeof v !== 'object' || v === null) return;
    if (depth >= BODY_SHAPE_LIMITS.maxDepth) fail(`nests deeper than ${BODY_SHAPE_LIMITS.maxDepth} levels`);
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        walk(v[i], depth + 1);
        path.pop();
      }
      return;
    }
    const keys = Object.keys(v);
    if (keys.length > BODY_SHAPE_LIMITS.maxKeysPerObject) fail(`has more than ${BODY_SHAPE_LIMITS.maxKeysPerObject} keys`);
    for (const k of keys) {
      path.push(k);
      if (k.includes('\0')) fail('a key must not contain a NUL character');
      walk((v as Record<string, unknown>)[k], depth + 1);
      path.pop();
    }
  };
  walk(body, 0);
}
