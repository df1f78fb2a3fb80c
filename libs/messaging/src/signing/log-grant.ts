import { KeyObject, verify } from 'node:crypto';
import { CommandSigner } from './command-signature';

/**
 * A log grant: the gateway's word that the bearer may read one attempt's log on one node until
 * `exp` (ADR 0021). The gateway authorises the caller (the job's owner or an operator), then signs
 * a grant with the control plane's command key; the agent serving the log verifies it with the
 * command public key(s) it already trusts (ADR 0015), so it needs no new secret and trusts no
 * unsigned request. The signed bytes start with a context line, so a grant's signature can never
 * pass as a command's (a command is the JSON value's bytes, which cannot start with it) nor the
 * reverse.
 */
export interface LogGrant {
  jobId: string;
  attempt: number;
  nodeId: string;
  /** Epoch ms after which the grant is refused. */
  exp: number;
}

/** The scheme of the Authorization header an agent's log server takes: `Gantry-Log-Grant <token>`. */
export const LOG_GRANT_SCHEME = 'Gantry-Log-Grant';
const CONTEXT = 'gantry-log-grant.v1\n';
/** Longest grant an agent accepts, whatever `exp` it names: a leaked grant is worth little for long. */
export const LOG_GRANT_MAX_TTL_MS = 5 * 60_000;

/** `<base64url(payload JSON)>.<base64url(Ed25519 signature of CONTEXT + payload part)>`. */
export function signLogGrant(grant: LogGrant, signer: CommandSigner): string {
  const payload = Buffer.from(JSON.stringify({ jobId: grant.jobId, attempt: grant.attempt, nodeId: grant.nodeId, exp: grant.exp })).toString('base64url');
  const header = signer.sign(CONTEXT + payload);
  // CommandSigner writes `ed25519=<base64>`; the grant carries the raw signature in base64url.
  const signature = Buffer.from(header.slice(header.indexOf('=') + 1), 'base64').toString('base64url');
  return `${payload}.${signature}`;
}

export type LogGrantRefusal = 'malformed' | 'bad-signature' | 'expired' | 'too-long' | 'out-of-scope';

/**
 * Why `token` does not let its bearer read (jobId, attempt) on one of `nodeIds` at `now`, or null
 * when it does. Checked in that order: the signature first, so nothing unsigned is even looked at.
 */
export function refuseLogGrant(
  token: string | undefined,
  want: { jobId: string; attempt: number; nodeIds: ReadonlySet<string> | ((nodeId: string) => boolean) },
  keys: KeyObject[],
  now: number,
): { refusal: LogGrantRefusal; grant?: undefined } | { refusal: null; grant: LogGrant } {
  const parts = token?.split('.') ?? [];
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]{1,2048}$/.test(parts[0]) || !/^[A-Za-z0-9_-]{86}$/.test(parts[1])) return { refusal: 'malformed' };
  const signature = Buffer.from(parts[1], 'base64url');
  if (signature.length !== 64 || !keys.some((k) => verify(null, Buffer.from(CONTEXT + parts[0]), k, signature))) return { refusal: 'bad-signature' };
  let grant: LogGrant;
  try {
    grant = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as LogGrant;
  } catch {
    return { refusal: 'malformed' };
  }
  if (typeof grant.jobId !== 'string' || !Number.isInteger(grant.attempt) || typeof grant.nodeId !== 'string' || !Number.isFinite(grant.exp))
    return { refusal: 'malformed' };
  if (grant.exp <= now) return { refusal: 'expired' };
  if (grant.exp - now > LOG_GRANT_MAX_TTL_MS) return { refusal: 'too-long' };
  const hasNode = typeof want.nodeIds === 'function' ? want.nodeIds(grant.nodeId) : want.nodeIds.has(grant.nodeId);
  if (grant.jobId !== want.jobId || grant.attempt !== want.attempt || !hasNode) return { refusal: 'out-of-scope' };
  return { refusal: null, grant };
}
