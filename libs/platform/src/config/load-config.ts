import { plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** What a config class may add to its field-by-field validation. */
export interface ConfigRules {
  /** Sets the defaults that follow other settings, for the variables the environment did not set. */
  applyDerivedDefaults?(given: ReadonlySet<string>): void;
  /** Rules between variables: one line per broken rule, naming the variables. */
  problems?(given: ReadonlySet<string>): string[];
}

/** Variables whose values are secrets: an error names them and says how long the value is, never what it is. */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|_KEY)$/;

function shown(name: string, value: string | undefined): string {
  if (value === undefined) return 'null';
  return SECRET_NAME.test(name) ? `<${value.length} characters, not shown>` : JSON.stringify(value);
}

/**
 * Reads environment variables into a validated config class; fails listing every bad variable by name.
 * Defaults live on the class fields; strings are converted to numbers/booleans where the field says so.
 * Then the class's derived defaults are applied and the rules between variables checked (ConfigRules).
 */
export function loadConfig<T extends object>(cls: new () => T, env: NodeJS.ProcessEnv = process.env): T {
  const defined = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const config = plainToInstance(cls, defined, { enableImplicitConversion: true, exposeDefaultValues: true });
  const errors: ValidationError[] = validateSync(config, { whitelist: true, forbidUnknownValues: true });
  if (errors.length > 0) {
    throw new ConfigError(errors.map((e) => `${e.property}=${shown(e.property, env[e.property])}: ${Object.values(e.constraints ?? {}).join('; ')}`));
  }
  const rules = config as ConfigRules;
  const given = new Set(Object.keys(defined));
  rules.applyDerivedDefaults?.(given);
  const problems = rules.problems?.(given) ?? [];
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
