import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { JobSpec } from '@gantry/client';
import { CliError, UsageError } from './cli-error';

/** Flags of `gantry submit` that shape the job (each overrides the same field of the file). */
export interface SubmitFlags {
  file?: string;
  name?: string;
  image?: string;
  queue?: string;
  gpus?: string;
  gpuModel?: string;
  cpus?: string;
  memory?: string;
  nodes?: string;
  maxRetries?: string;
  /** retryPolicy.maxRetries. */
  retries?: string;
  /** retryPolicy.retryOnExitCodes, comma-separated. */
  retryOnExitCodes?: string;
  /** retryPolicy.backoffSeconds. */
  backoff?: string;
  /** retryPolicy.maxBackoffSeconds. */
  maxBackoff?: string;
  /** `<job-id>[:succeeded|finished]`, repeatable (dependsOn; default condition succeeded, as Slurm's afterok). */
  dependsOn?: string[];
  /** maxRuntimeSeconds. */
  maxRuntime?: string;
  env?: string[];
  label?: string[];
}

/**
 * The body of POST /v1/jobs from a YAML or JSON file (`-f`, `-` for stdin), flags and the command
 * after `--`. Only the shape is checked here; the server judges the values and its answer names
 * every bad field.
 */
export function buildJobSpec(flags: SubmitFlags, command: string[], readFile: (path: string) => string = readJobFile): JobSpec {
  const fromFile = flags.file ? parseJobFile(readFile(flags.file), flags.file) : {};
  const spec: Record<string, unknown> = { ...fromFile };
  const set = (key: string, value: unknown) => {
    if (value !== undefined) spec[key] = value;
  };
  set('name', flags.name);
  set('image', flags.image);
  set('queue', flags.queue);
  set('nodes', int(flags.nodes, '--nodes'));
  set('maxRetries', int(flags.maxRetries, '--max-retries'));
  set('maxRuntimeSeconds', int(flags.maxRuntime, '--max-runtime'));
  const policyFlags = {
    maxRetries: int(flags.retries, '--retries'),
    backoffSeconds: int(flags.backoff, '--backoff'),
    maxBackoffSeconds: int(flags.maxBackoff, '--max-backoff'),
    retryOnExitCodes: flags.retryOnExitCodes === undefined ? undefined : exitCodes(flags.retryOnExitCodes),
  };
  if (Object.values(policyFlags).some((v) => v !== undefined)) {
    spec.retryPolicy = { ...(spec.retryPolicy as object), ...Object.fromEntries(Object.entries(policyFlags).filter(([, v]) => v !== undefined)) };
  }
  if (flags.dependsOn?.length) spec.dependsOn = [...((spec.dependsOn as unknown[] | undefined) ?? []), ...flags.dependsOn.map(dependency)];
  if (command.length) spec.command = command;
  if (flags.env?.length) spec.env = { ...(spec.env as object), ...pairs(flags.env, '--env') };
  if (flags.label?.length) spec.labels = { ...(spec.labels as object), ...pairs(flags.label, '--label') };
  const resourceFlags = {
    gpus: int(flags.gpus, '--gpus'),
    gpuModel: flags.gpuModel,
    cpuCores: int(flags.cpus, '--cpus'),
    memoryMiB: int(flags.memory, '--memory'),
  };
  if (Object.values(resourceFlags).some((v) => v !== undefined)) {
    const base = (spec.resources as Record<string, unknown> | undefined) ?? { gpus: 0, cpuCores: 1, memoryMiB: 1024 };
    spec.resources = { ...base, ...Object.fromEntries(Object.entries(resourceFlags).filter(([, v]) => v !== undefined)) };
  }
  spec.name ??= defaultName(spec.command);
  spec.image ??= 'none';
  if (!Array.isArray(spec.command) || spec.command.length === 0) {
    throw new UsageError('no command: give it after `--` (gantry submit -- python train.py) or as `command:` in the job file');
  }
  return spec as unknown as JobSpec;
}

function readJobFile(path: string): string {
  try {
    return readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** YAML (JSON is YAML too); the top level must be a mapping. */
export function parseJobFile(text: string, path: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new CliError(`${path} is not valid YAML or JSON: ${(e as Error).message.split('\n')[0]}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new CliError(`${path} must hold one job: a mapping of fields (name, image, command, ...)`);
  return doc as Record<string, unknown>;
}

function int(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw)) throw new UsageError(`${flag} must be a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** `0,137,143` -> [0, 137, 143]. */
function exitCodes(raw: string): number[] {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.some((p) => !/^-?\d+$/.test(p))) throw new UsageError(`--retry-on-exit-codes takes whole numbers separated by commas, got ${JSON.stringify(raw)}`);
  return parts.map(Number);
}

/** `<job-id>[:succeeded|finished]`: a job id and the condition it must end in (default succeeded). */
function dependency(raw: string): { jobId: string; condition: 'succeeded' | 'finished' } {
  const m = /^([^:]+)(?::(succeeded|finished))?$/.exec(raw);
  if (!m) throw new UsageError(`--depends-on takes <job-id>[:succeeded|finished], got ${JSON.stringify(raw)}`);
  return { jobId: m[1], condition: (m[2] as 'succeeded' | 'finished' | undefined) ?? 'succeeded' };
}

function pairs(items: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf('=');
    if (at <= 0) throw new UsageError(`${flag} takes KEY=VALUE, got ${JSON.stringify(item)}`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

function defaultName(command: unknown): string {
  const first = Array.isArray(command) && typeof command[0] === 'string' ? command[0] : 'job';
  return (first.split('/').pop() || 'job').slice(0, 63);
}
