/**
 * Issue 33, item 5: a webhook may only reach global unicast addresses. IPv6 forms that carry an IPv4 address
 * (NAT64, 6to4, IPv4-compatible, IPv4-mapped) are judged by the IPv4 address they reach; the rest of IPv6 must be
 * global unicast (2000::/3) outside its special ranges. Checked at send time after DNS, as at registration.
 */
import dnsPromises from 'node:dns/promises';
import { syncBuiltinESMExports } from 'node:module';
import test from 'ava';
import { isBlockedAddress } from '../../src/webhooks/public-address.ts';
import { postWebhook } from '../../src/webhooks/send.ts';

/** Each address and whether a webhook may reach it, with why. */
const table: [address: string, allowed: boolean, why: string][] = [
  ['64:ff9b::a9fe:a9fe', false, 'NAT64 (well-known prefix) of 169.254.169.254, the metadata service'],
  ['64:ff9b::7f00:1', false, 'NAT64 of 127.0.0.1'],
  ['64:ff9b::10.0.0.1', false, 'NAT64 of 10.0.0.1, written dotted'],
  ['64:ff9b::808:808', true, 'NAT64 of 8.8.8.8'],
  ['64:ff9b:1::a9fe:a9fe', false, 'local-use NAT64 (64:ff9b:1::/48) of 169.254.169.254'],
  ['64:ff9b:1::808:808', true, 'local-use NAT64 of 8.8.8.8 in its /96 form'],
  ['64:ff9b:1:a9fe:a9:fe00::808:808', false, 'local-use NAT64 in another embedding: not decodable, refused'],
  ['::127.0.0.1', false, 'IPv4-compatible 127.0.0.1'],
  ['::7f00:1', false, 'IPv4-compatible 127.0.0.1, written in hex'],
  ['::a9fe:a9fe', false, 'IPv4-compatible 169.254.169.254'],
  ['::8.8.8.8', true, 'IPv4-compatible 8.8.8.8'],
  ['::ffff:127.0.0.1', false, 'IPv4-mapped 127.0.0.1'],
  ['::ffff:a9fe:a9fe', false, 'IPv4-mapped 169.254.169.254, written in hex'],
  ['::ffff:8.8.8.8', true, 'IPv4-mapped 8.8.8.8'],
  ['::ffff:0:7f00:1', false, 'IPv4-translated (SIIT): not global unicast'],
  ['2002:a9fe:a9fe::1', false, '6to4 of 169.254.169.254'],
  ['2002:7f00:1::', false, '6to4 of 127.0.0.1'],
  ['2002:c0a8:101::1', false, '6to4 of 192.168.1.1'],
  ['2002:808:808::1', true, '6to4 of 8.8.8.8'],
  ['fec0::1', false, 'site-local (deprecated, fec0::/10)'],
  ['feff::1', false, 'site-local, top of fec0::/10'],
  ['fc00::1', false, 'unique-local'],
  ['fd12:3456::1', false, 'unique-local'],
  ['fe80::1', false, 'link-local'],
  ['fe80::1%eth0', false, 'link-local with a zone'],
  ['ff02::1', false, 'multicast'],
  ['ff0e::1', false, 'global-scope multicast'],
  ['::1', false, 'loopback'],
  ['::', false, 'unspecified'],
  ['2001:db8::1', false, 'documentation'],
  ['3fff::1', false, 'documentation (RFC 9637)'],
  ['2001::1', false, 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false, 'Teredo'],
  ['2001:2::1', false, 'benchmarking'],
  ['2001:10::1', false, 'ORCHID'],
  ['2001:20::1', false, 'ORCHIDv2'],
  ['100::1', false, 'discard-only'],
  ['5f00::1', false, 'SRv6 SIDs (5f00::/16), outside 2000::/3'],
  ['4000::1', false, 'unassigned, outside 2000::/3'],
  ['2606:4700::1111', true, 'global unicast'],
  ['2a00:1450:4001:80b::200e', true, 'global unicast'],
  ['2620:4f:8000::1', true, 'global unicast (AS112)'],
  ['192.0.2.1', false, 'IPv4 documentation (TEST-NET-1)'],
  ['198.51.100.7', false, 'IPv4 documentation (TEST-NET-2)'],
  ['203.0.113.9', false, 'IPv4 documentation (TEST-NET-3)'],
  ['192.88.99.1', false, '6to4 relay anycast'],
  ['255.255.255.255', false, 'broadcast'],
  ['169.254.169.254', false, 'link-local metadata'],
  ['8.8.8.8', true, 'global'],
  ['93.184.215.14', true, 'global'],
];

test('only global unicast addresses are allowed (issue 33): the table', (t) => {
  for (const [address, allowed, why] of table) t.is(isBlockedAddress(address), !allowed, `${address}: ${why}`);
});

/**
 * The send-time check after DNS: `node:dns/promises`'s `lookup` answers what a hostile DNS would (the outside world,
 * faked), so the send resolves a name to the issue's probes and must refuse without connecting.
 */
test.serial('at send time, a name resolving to the NAT64 or IPv4-compatible probe is refused after DNS', async (t) => {
  const realLookup = dnsPromises.lookup;
  const answers: Record<string, { address: string; family: number }[]> = {
    'metadata.nat64.example': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
    'loopback.compat.example': [{ address: '::127.0.0.1', family: 6 }],
  };
  const asked: string[] = [];
  (dnsPromises as { lookup: unknown }).lookup = async (host: string) => {
    asked.push(host);
    const found = answers[host];
    if (!found) throw Object.assign(new Error(`not found: ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  syncBuiltinESMExports();
  t.teardown(() => {
    (dnsPromises as { lookup: unknown }).lookup = realLookup;
    syncBuiltinESMExports();
  });
  for (const [url, address] of [
    ['http://metadata.nat64.example/latest', '64:ff9b::a9fe:a9fe'],
    ['http://loopback.compat.example:3999/', '::127.0.0.1'],
  ] as const) {
    const outcome = await postWebhook(url, '{}', {}, { allowPrivate: false, timeoutMs: 2000 });
    t.false(outcome.ok, url);
    t.is(outcome.statusCode, null, url);
    t.is(
      outcome.error,
      `destination refused: host ${new URL(url).hostname} resolves to ${address}, not a public address`,
    );
  }
  t.deepEqual(asked, ['metadata.nat64.example', 'loopback.compat.example'], 'the names went through DNS');
});

test('at send time, the probes written as literal addresses are refused without connecting', async (t) => {
  for (const url of ['http://[64:ff9b::a9fe:a9fe]/latest', 'http://[::127.0.0.1]:3999']) {
    const outcome = await postWebhook(url, '{}', {}, { allowPrivate: false, timeoutMs: 2000 });
    t.false(outcome.ok, url);
    t.regex(outcome.error!, /^destination refused: host \S+ resolves to \S+, not a public address$/, url);
  }
});
