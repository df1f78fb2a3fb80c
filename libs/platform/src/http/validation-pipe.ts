import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorCode, FieldError } from './problem';

function fieldErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...fieldErrors(e.children ?? [], field)];
  });
}

/**
 * A hand-written check for one DTO class on a hot path: returns the instance the pipe would have
 * returned, or null to leave the verdict to the pipe. It must never accept what the class refuses
 * (each one has a spec proving it agrees with the pipe).
 */
export type FastValidator = (value: unknown) => object | null;

/** A body whose DTO has a FastValidator skips class-transformer and class-validator when the check accepts it. */
class FastPathValidationPipe extends ValidationPipe {
  constructor(
    options: ConstructorParameters<typeof ValidationPipe>[0],
    private readonly fast: ReadonlyMap<unknown, FastValidator>,
  ) {
    super(options);
  }

  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const accepted = metadata.type === 'body' ? (this.fast.get(metadata.metatype)?.(value) ?? null) : null;
    return accepted ? Promise.resolve(accepted) : super.transform(value, metadata);
  }
}

/** Rejects unknown fields and reports each invalid one by name, as problem+json. */
export function createValidationPipe(fast: ReadonlyMap<unknown, FastValidator> = new Map()): ValidationPipe {
  return new FastPathValidationPipe(
    {
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => {
        const list = fieldErrors(errors);
        return new ApiError(ErrorCode.VALIDATION_FAILED, list.map((f) => `${f.field}: ${f.message}`).join('; '), list);
      },
    },
    fast,
  );
}
