import fc from 'fast-check';
import { anonymousClientKey } from './anonymous-client-key';

describe('anonymousClientKey', () => {
  it.each<[string, string | null | undefined, string]>([
    ['an IPv4 address is its own key', '192.0.2.7', '192.0.2.7'],
    ['loopback', '127.0.0.1', '127.0.0.1'],
    ['an IPv4 address a dual-stack socket reports as IPv6 is that IPv4 address', '::ffff:192.0.2.7', '192.0.2.7'],
    ['the same, in hex groups', '::ffff:c000:0207', '192.0.2.7'],
    ['an IPv6 address shares its /64', '2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['another address of that /64 shares the key', '2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['a compressed prefix is expanded', '2001:db8::1', '2001:db8:0:0::/64'],
    ['upper case and leading zeros do not make another key', '2001:0DB8:0001:0002::1', '2001:db8:1:2::/64'],
    ['a zone index is dropped', 'fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['IPv6 loopback', '::1', '0:0:0:0::/64'],
    ['no address', undefined, 'unknown'],
    ['an empty address', '', 'unknown'],
    ['something that is not an address', 'not-an-ip', 'unknown'],
    ['two compressions', '1::2::3', 'unknown'],
    ['nine groups', '1:2:3:4:5:6:7:8:9', 'unknown'],
    ['an IPv4 octet out of range', '256.1.1.1', 'unknown'],
  ])('%s', (_name, address, key) => {
    expect(anonymousClientKey(address)).toBe(key);
  });

  it('gives every address of one /64 the same key, and addresses of two /64s different keys', () => {
    const group = fc.integer({ min: 0, max: 0xffff });
    const prefix = fc.tuple(fc.constant(0x2001), group, group, group);
    const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
    fc.assert(
      fc.property(prefix, prefix, fc.tuple(group, group, group, group), fc.tuple(group, group, group, group), (p, q, a, b) => {
        expect(anonymousClientKey(hex([...p, ...a]))).toBe(anonymousClientKey(hex([...p, ...b])));
        if (hex(p) !== hex(q)) expect(anonymousClientKey(hex([...p, ...a]))).not.toBe(anonymousClientKey(hex([...q, ...a])));
      }),
    );
  });
});
