import { ValidationOptions, registerDecorator } from 'class-validator';

export interface StringRecordLimits {
  maxEntries: number;
  maxKeyLength: number;
  maxValueLength: number;
  keyPattern?: RegExp;
}

/** The check behind IsStringRecord, for hand-written validators that must agree with it. */
export function isStringRecord(value: unknown, limits: StringRecordLimits): value is Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  if (entries.length > limits.maxEntries) return false;
  return entries.every(
    ([k, v]) =>
      k.length > 0 &&
      k.length <= limits.maxKeyLength &&
      (!limits.keyPattern || limits.keyPattern.test(k)) &&
      typeof v === 'string' &&
      v.length <= limits.maxValueLength,
  );
}

/** A flat JSON object of string values with bounded size (env vars, labels). */
export function IsStringRecord(limits: StringRecordLimits, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isStringRecord',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `$property must be an object of at most ${limits.maxEntries} string values, keys up to ${limits.maxKeyLength} characters${limits.keyPattern ? ` matching ${limits.keyPattern}` : ''}, values up to ${limits.maxValueLength}`,
        ...options,
      },
      validator: {
        validate: (value: unknown): boolean => isStringRecord(value, limits),
      },
    });
}
