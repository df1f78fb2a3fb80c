import { ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError, ErrorCode, FieldError } from './problem';

function fieldErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((e) => {
    const field = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((message) => ({ field, message }));
    return [...own, ...fieldErrors(e.children ?? [], field)];
  });
}

/** Rejects unknown fields and reports each invalid one by name, as problem+json. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => {
      const list = fieldErrors(errors);
      return new ApiError(ErrorCode.VALIDATION_FAILED, list.map((f) => `${f.field}: ${f.message}`).join('; '), list);
    },
  });
}
