import { kafkaTokenUsable } from './kafka-token-renewal';

const token = { issuedAt: 1_000_000, expiresAt: 1_600_000 };

describe('kafkaTokenUsable', () => {
  it.each<[string, typeof token | null, number, string]>([
    ['no token yet', null, 1_000_000, 'expired'],
    ['just issued', token, 1_000_000, 'fresh'],
    ['before half its life', token, 1_299_999, 'fresh'],
    ['at half its life', token, 1_300_000, 'renew'],
    ['a moment before it expires', token, 1_599_999, 'renew'],
    ['at its expiry', token, 1_600_000, 'expired'],
    ['after its expiry', token, 2_000_000, 'expired'],
  ])('%s', (_name, t, now, expected) => {
    expect(kafkaTokenUsable(t, now)).toBe(expected);
  });
});
