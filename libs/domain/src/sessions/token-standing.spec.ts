import { TokenLifetime, msUntilTokenEnds, tokenStanding } from './token-standing';

const at = (ms: number) => new Date(ms);

describe('tokenStanding and msUntilTokenEnds', () => {
  it.each<[string, TokenLifetime, number, string, number | null]>([
    ['a token without expiry stands for ever', { expiresAt: null, revokedAt: null }, 1000, 'valid', null],
    ['a token before its expiry stands until then', { expiresAt: at(1500), revokedAt: null }, 1000, 'valid', 500],
    ['a token at its expiry instant has expired', { expiresAt: at(1000), revokedAt: null }, 1000, 'expired', 0],
    ['a token past its expiry has expired', { expiresAt: at(900), revokedAt: null }, 1000, 'expired', 0],
    ['a revoked token is revoked, whatever its expiry', { expiresAt: at(5000), revokedAt: at(10) }, 1000, 'revoked', 0],
    ['revocation is final even when expiry came first', { expiresAt: at(500), revokedAt: at(600) }, 1000, 'revoked', 0],
  ])('%s', (_name, token, nowMs, standing, untilEnd) => {
    expect(tokenStanding(token, nowMs)).toBe(standing);
    expect(msUntilTokenEnds(token, nowMs)).toBe(untilEnd);
  });
});
