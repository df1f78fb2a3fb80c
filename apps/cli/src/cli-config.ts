import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError } from './cli-error';

/** What `gantry login` saves. */
export interface SavedConfig {
  url?: string;
  token?: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/** `$XDG_CONFIG_HOME/gantry/config.json`, else `~/.config/gantry/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'gantry', 'config.json');
}

export function loadConfig(path = configPath()): SavedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    const { url, token } = parsed as Record<string, unknown>;
    return { url: typeof url === 'string' ? url : undefined, token: typeof token === 'string' ? token : undefined };
  } catch (e) {
    throw new CliError(`${path} is not valid JSON (${(e as Error).message}); fix it or run \`gantry login\` again`);
  }
}

/** Saves the config readable by its owner only: it holds a bearer token. */
export function saveConfig(config: SavedConfig, path = configPath()): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** Where to connect and as whom: flags, then GANTRY_URL/GANTRY_TOKEN, then the saved config. */
export function resolveConnection(
  flags: { url?: string; token?: string },
  env: NodeJS.ProcessEnv = process.env,
  saved: SavedConfig = loadConfig(configPath(env)),
): { url: string; token: string | undefined } {
  const url = (flags.url || env.GANTRY_URL || saved.url || DEFAULT_URL).replace(/\/+$/, '');
  const token = flags.token || env.GANTRY_TOKEN || saved.token;
  return { url, token };
}
