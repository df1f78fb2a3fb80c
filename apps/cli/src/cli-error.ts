import { GantryApiError } from '@gantry/client';

/** Exit codes (contract §4.6): 0 ok, 1 an error, 2 a usage error. */
export const EXIT = { ok: 0, error: 1, usage: 2 } as const;

/** A mistake in how the command was called: printed with a hint to --help, exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Something went wrong that is not a usage mistake, with a message fit to print: exit 1. */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/**
 * What the user reads when a command fails: a problem's title and detail (and its field errors),
 * never a stack trace; and the exit code that goes with it.
 */
export function describeFailure(e: unknown, baseUrl: string): { message: string; code: number } {
  if (e instanceof UsageError) return { message: `error: ${e.message}\n(run with --help for usage)`, code: EXIT.usage };
  if (e instanceof CliError) return { message: `error: ${e.message}`, code: EXIT.error };
  if (e instanceof GantryApiError) {
    const p = e.problem;
    const lines = [`error: ${p.title ?? `HTTP ${e.status}`}${p.detail ? `: ${p.detail}` : ''}`];
    for (const f of p.errors ?? []) lines.push(`  ${f.field}: ${f.message}`);
    if (e.status === 401) lines.push('  (run `gantry login`, or set GANTRY_TOKEN)');
    return { message: lines.join('\n'), code: EXIT.error };
  }
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err?.name === 'TypeError' && err.message === 'fetch failed') {
    return {
      message: `error: cannot reach ${baseUrl}: ${err.cause?.code ?? err.cause?.message ?? 'connection failed'} (is the gateway running? set GANTRY_URL or run \`gantry login --url\`)`,
      code: EXIT.error,
    };
  }
  if (err?.name === 'TimeoutError') return { message: `error: ${baseUrl} did not answer in time`, code: EXIT.error };
  return { message: `error: ${err?.message ?? String(e)}`, code: EXIT.error };
}
