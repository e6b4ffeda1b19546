/**
 * D-73 and issue 33: the one rule of which addresses a webhook may reach (unless WEBHOOK_ALLOW_PRIVATE_URLS is
 * set): global unicast only. An IPv6 address that carries an IPv4 address (NAT64, 6to4, IPv4-compatible,
 * IPv4-mapped) reaches that IPv4 host, so it is judged by it: `64:ff9b::a9fe:a9fe` is the metadata service.
 */
import net from 'node:net';

/** IPv4 ranges that are not global (IANA's special-purpose registry): private, loopback, link-local, ... */
const nonGlobalV4 = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local: the cloud metadata service lives at 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const)
  nonGlobalV4.addSubnet(prefix, bits, 'ipv4');

/** IPv6 global unicast is 2000::/3; everything outside it (loopback, ULA, link- and site-local, multicast) is not. */
const globalUnicastV6 = new net.BlockList();
globalUnicastV6.addSubnet('2000::', 3, 'ipv6');
/** Ranges inside 2000::/3 that are not global destinations. */
const nonGlobalV6 = new net.BlockList();
for (const [prefix, bits] of [
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
] as const)
  nonGlobalV6.addSubnet(prefix, bits, 'ipv6');

/** The eight 16-bit words of a valid IPv6 literal (`::` expanded, a dotted IPv4 tail turned into two words). */
function ipv6Words(address: string): number[] {
  const hex = address.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_, a, b, c, d) => `${((+a << 8) | +b).toString(16)}:${((+c << 8) | +d).toString(16)}`,
  );
  const words = (part: string) => (part === '' ? [] : part.split(':').map((w) => Number.parseInt(w, 16)));
  const [head, tail] = hex.split('::') as [string, string | undefined];
  if (tail === undefined) return words(head);
  const front = words(head);
  const back = words(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
const zero = (words: number[]) => words.every((w) => w === 0);

/**
 * The IPv4 address an IPv6 address reaches, when it embeds one: IPv4-compatible (::a.b.c.d, which also covers
 * :: and ::1), IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96, and the local-use 64:ff9b:1::/48 in its /96
 * form: other embeddings there are the operator's own and cannot be decoded, so they stay refused) and 6to4
 * (2002:aabb:ccdd::/48).
 */
function embeddedIPv4(w: number[]): string | undefined {
  const last = ipv4Of(w[6]!, w[7]!);
  if (zero(w.slice(0, 6))) return last;
  if (zero(w.slice(0, 5)) && w[5] === 0xffff) return last;
  if (w[0] === 0x64 && w[1] === 0xff9b && (w[2] === 0 || w[2] === 1) && zero(w.slice(3, 6))) return last;
  if (w[0] === 0x2002) return ipv4Of(w[1]!, w[2]!);
  return undefined;
}

/** Whether `address` (a literal IPv4 or IPv6 address) is one a webhook may not reach: anything not global unicast. */
export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return nonGlobalV4.check(address, 'ipv4');
  // Not an address, or one with a zone (fe80::1%eth0): only link-local addresses need a zone.
  if (family !== 6 || address.includes('%')) return true;
  const embedded = embeddedIPv4(ipv6Words(address));
  if (embedded) return nonGlobalV4.check(embedded, 'ipv4');
  return !globalUnicastV6.check(address, 'ipv6') || nonGlobalV6.check(address, 'ipv6');
}
