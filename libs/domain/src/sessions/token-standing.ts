/**
 * Whether a bearer token still stands at `nowMs`: the one rule for authenticating a request
 * and for ending the streams opened with the token (contract §4.3, §5.3). Revocation is final;
 * a token with an `expiresAt` stops standing at that instant.
 */
export type TokenStanding = 'valid' | 'revoked' | 'expired';

export interface TokenLifetime {
  /** null: never expires. */
  expiresAt: Date | null;
  /** null: not revoked. */
  revokedAt: Date | null;
}

export function tokenStanding(token: TokenLifetime, nowMs: number): TokenStanding {
  if (token.revokedAt) return 'revoked';
  if (token.expiresAt && token.expiresAt.getTime() <= nowMs) return 'expired';
  return 'valid';
}

/** How long until the clock alone ends a valid token, ms (0 when it no longer stands); null: never. */
export function msUntilTokenEnds(token: TokenLifetime, nowMs: number): number | null {
  if (tokenStanding(token, nowMs) !== 'valid') return 0;
  return token.expiresAt ? token.expiresAt.getTime() - nowMs : null;
}
