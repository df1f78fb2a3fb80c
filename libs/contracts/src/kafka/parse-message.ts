import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';

export type ParseResult<T> = { ok: true; value: T } | { ok: false; reason: string };

function flatten(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => `${path}: ${m}`);
    return [...own, ...flatten(e.children ?? [], path)];
  });
}

/**
 * Parses and validates one Kafka message value. Unknown fields are ignored (contract §3);
 * anything that fails gives a reason fit for the dead-letter topic; nothing throws.
 */
export function parseMessage<T extends object>(cls: new () => T, raw: Buffer | string | null): ParseResult<T> {
  if (raw === null) return { ok: false, reason: 'empty message value' };
  let data: unknown;
  try {
    data = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch (e) {
    return { ok: false, reason: `invalid JSON: ${(e as Error).message}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, reason: 'message value must be a JSON object' };
  }
  let value: T;
  let errors: ValidationError[];
  try {
    value = plainToInstance(cls, data);
    errors = validateSync(value, { whitelist: true, forbidUnknownValues: true });
  } catch (e) {
    // class-transformer throws on some values (a free-form map with a `constructor` key holding an
    // object): refused, so the message is dead-lettered instead of retried forever.
    return { ok: false, reason: `invalid message: ${(e as Error).message}`.slice(0, 2000) };
  }
  if (errors.length > 0) return { ok: false, reason: flatten(errors).join('; ').slice(0, 2000) };
  return { ok: true, value };
}
