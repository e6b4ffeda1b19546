import { lookup } from 'node:dns/promises';
import net from 'node:net';

/**
 * D-73: addresses a webhook may never reach unless WEBHOOK_ALLOW_PRIVATE_URLS is set: loopback, private,
 * link-local (the cloud metadata service lives at 169.254.169.254), unspecified, CGNAT, multicast and reserved.
 */
const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(prefix, bits, 'ipv4');
for (const [prefix, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(prefix, bits, 'ipv6');

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export class UnsafeDestinationError extends Error {}

/** Whether `address` (a literal IPv4 or IPv6 address) is one D-73 refuses. */
export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) reaches the IPv4 host it embeds.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blocked.check(mapped[1]!, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** Every address `hostname` resolves to (a literal address resolves to itself). */
export async function resolveHost(hostname: string): Promise<ResolvedAddress[]> {
  const host = hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = net.isIP(host);
  if (literal) return [{ address: host, family: literal as 4 | 6 }];
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family as 4 | 6 }));
  } catch (error) {
    throw new UnsafeDestinationError(
      `host ${host} does not resolve (${(error as { code?: string }).code ?? 'lookup failed'})`,
    );
  }
}

/**
 * Resolves the URL's host and refuses it when any address is blocked (a host with one public and one
 * private address could be steered to the private one). Returns the address to connect to.
 */
export async function checkDestination(url: URL): Promise<ResolvedAddress> {
  const addresses = await resolveHost(url.hostname);
  if (addresses.length === 0) throw new UnsafeDestinationError(`host ${url.hostname} does not resolve`);
  const refused = addresses.find((a) => isBlockedAddress(a.address));
  if (refused)
    throw new UnsafeDestinationError(
      `host ${url.hostname} resolves to ${refused.address}, a private, loopback or link-local address`,
    );
  return addresses[0]!;
}

/** A `lookup` for http.request that answers only the checked address, so the socket goes where we checked. */
export function pinnedLookup(target: ResolvedAddress): net.LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as net.LookupFunction;
}
