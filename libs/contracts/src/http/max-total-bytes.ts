import { ValidationOptions, registerDecorator } from 'class-validator';

/**
 * UTF-8 bytes of every string in an array, or of every key and string value of an object: what a
 * command line or an environment costs the node that runs it (execve takes them as bytes).
 * Anything else counts 0 (the other rules refuse it).
 */
export function totalBytes(value: unknown): number {
  let n = 0;
  if (Array.isArray(value)) {
    for (const s of value) if (typeof s === 'string') n += Buffer.byteLength(s, 'utf8');
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) n += Buffer.byteLength(k, 'utf8') + (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0);
  }
  return n;
}

/** At most `max` bytes in all (see totalBytes). */
export function MaxTotalBytes(max: number, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'maxTotalBytes',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property must hold at most ${max} bytes in all (UTF-8)`, ...options },
      validator: { validate: (value: unknown): boolean => totalBytes(value) <= max },
    });
}
