import { AnonymousRateLimiter } from './anonymous-rate-limiter';

function limiter(maxClients = 100) {
  const clock = { ms: 0 };
  return { clock, limiter: new AnonymousRateLimiter({ ratePerS: 20, burst: 20 }, () => clock.ms, maxClients) };
}

const allowedOf = (l: AnonymousRateLimiter, address: string | null, n: number) =>
  Array.from({ length: n }, () => l.take(address).allowed).filter(Boolean).length;

describe('AnonymousRateLimiter', () => {
  it('lets an address make a burst of 20, then refuses it with the time to wait, and lets it again once refilled', () => {
    const { clock, limiter: l } = limiter();
    expect(allowedOf(l, '192.0.2.1', 25)).toBe(20);
    const refused = l.take('192.0.2.1');
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 50 });
    clock.ms = 1000;
    expect(allowedOf(l, '192.0.2.1', 25)).toBe(20);
  });

  it.each<[string, string | null, string | null, boolean]>([
    ['two IPv4 addresses have budgets of their own', '192.0.2.1', '192.0.2.2', false],
    ['two addresses of one IPv6 /64 share one', '2001:db8:0:1::1', '2001:db8:0:1::2', true],
    ['two IPv6 /64s have their own', '2001:db8:0:1::1', '2001:db8:0:2::1', false],
    ['an IPv4 address shares with its IPv6-mapped form', '192.0.2.1', '::ffff:192.0.2.1', true],
    ['requests without an address share one', null, null, true],
  ])('%s', (_name, a, b, shared) => {
    const { limiter: l } = limiter();
    expect(allowedOf(l, a, 20)).toBe(20);
    expect(l.take(b).allowed).toBe(!shared);
  });

  it('remembers at most maxClients addresses, forgetting the least recently seen', () => {
    const { limiter: l } = limiter(3);
    for (const a of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) allowedOf(l, a, 20);
    // 10.0.0.1 is seen again: now 10.0.0.2 is the least recently seen.
    expect(l.take('10.0.0.1').allowed).toBe(false);
    l.take('10.0.0.4');
    expect(l.clients).toBe(3);
    expect(l.take('10.0.0.1').allowed).toBe(false);
    expect(l.take('10.0.0.3').allowed).toBe(false);
    // 10.0.0.2 was forgotten: a full bucket again.
    expect(l.take('10.0.0.2').allowed).toBe(true);
  });
});
