import { CommandSigner, LOG_GRANT_SCHEME, LogGrant, signLogGrant } from '@gantry/messaging';

/**
 * The Authorization header an agent's log server takes, with a grant signed by `signingKeyPem`
 * (the stack's command key, or another to forge one): for tests that speak to agents directly.
 */
export function logGrantHeader(signingKeyPem: string, grant: LogGrant): string {
  return `${LOG_GRANT_SCHEME} ${signLogGrant(grant, new CommandSigner(signingKeyPem))}`;
}
