import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { isBlockedAddress } from './public-address.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export class UnsafeDestinationError extends Error {}

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
    throw new UnsafeDestinationError(`host ${url.hostname} resolves to ${refused.address}, not a public address`);
  return addresses[0]!;
}

/** A `lookup` for http.request that answers only the checked address, so the socket goes where we checked. */
export function pinnedLookup(target: ResolvedAddress): net.LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as net.LookupFunction;
}
