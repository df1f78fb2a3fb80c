import { ValidationArguments, ValidationOptions, registerDecorator } from 'class-validator';
import { NO_IMAGE } from '../kafka/attempt-end-reasons';
import { agentSetEnvNames, containerUnsafeEnvNames } from './agent-set-env';
import { isValidJobImage } from './image-reference';

/** `image`: `none` or an image reference (contract 5.1). */
export function IsJobImage(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isJobImage',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property must be "${NO_IMAGE}" or an image reference ([host[:port]/]path[:tag][@digest])`, ...options },
      validator: { validate: (value: unknown): boolean => isValidJobImage(value) },
    });
}

const hasImage = (o: object): boolean => {
  const image = (o as { image?: unknown }).image;
  return typeof image === 'string' && image !== NO_IMAGE;
};

/**
 * `env`: no name the agent sets, and, for a job with an image, no value with a line break (see
 * containerUnsafeEnvNames). The message names the offending variables.
 */
export function HasNoAgentSetEnvNames(options?: ValidationOptions): PropertyDecorator {
  const offending = (value: unknown, object: object): { reserved: string[]; multiline: string[] } => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { reserved: [], multiline: [] };
    const env = value as Record<string, string>;
    const strings = Object.fromEntries(Object.entries(env).filter(([, v]) => typeof v === 'string'));
    return { reserved: agentSetEnvNames(strings), multiline: hasImage(object) ? containerUnsafeEnvNames(strings) : [] };
  };
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'hasNoAgentSetEnvNames',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: (args: ValidationArguments) => {
          const { reserved, multiline } = offending(args.value, args.object);
          const parts: string[] = [];
          if (reserved.length > 0) parts.push(`${args.property} may not set ${reserved.slice(0, 8).join(', ')} (the agent sets them)`);
          if (multiline.length > 0) parts.push(`${args.property} of a job with an image may not hold a line break (${multiline.slice(0, 8).join(', ')})`);
          return parts.join('; ');
        },
        ...options,
      },
      validator: {
        validate: (value: unknown, args: ValidationArguments): boolean => {
          const { reserved, multiline } = offending(value, args.object);
          return reserved.length === 0 && multiline.length === 0;
        },
      },
    });
}
