/**
 * Which requests share one budget for unauthenticated requests (contract §5.3): those from one
 * IPv4 address, or from one IPv6 /64. A single host or site is handed a whole /64 (RFC 6177), so
 * limiting each IPv6 address alone would give one client 2^64 budgets. An IPv4 address written as
 * IPv6 (`::ffff:192.0.2.1`, how a dual-stack socket reports it) is that IPv4 address. Anything
 * that is neither (no address: a closed socket) shares the key `unknown`.
 */
export function anonymousClientKey(address: string | null | undefined): string {
  if (!address) return 'unknown';
  const zoneless = address.split('%')[0].toLowerCase();
  if (IPV4.test(zoneless)) return zoneless;
  const groups = expandIpv6(zoneless);
  if (!groups) return 'unknown';
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const GROUP = /^[0-9a-f]{1,4}$/;

/** The eight 16-bit groups of an IPv6 address (`::` compression and a dotted IPv4 tail allowed), or null. */
function expandIpv6(address: string): number[] | null {
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const pieces = part.split(':');
    for (let i = 0; i < pieces.length; i++) {
      const p = pieces[i];
      if (i === pieces.length - 1 && IPV4.test(p)) {
        const [a, b, c, d] = p.split('.').map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else if (GROUP.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  if (!head || !tail) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  return missing >= 1 ? [...head, ...Array<number>(missing).fill(0), ...tail] : null;
}
