import { hash } from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import { batchContentHasher, contentHash } from '../../src/usage-api/event-content.ts';
import { probeMonths } from '../../src/usage/events-repo.ts';

/** The content hash as first written (issue 35): stored hashes are this text's, so the form must never change. */
function referenceHash(event: {
  metric: string;
  timestamp?: Date;
  subscriptionId?: string;
  properties?: Record<string, unknown>;
}): string {
  // Keys sorted at every depth by JSON.stringify's replacer: another route to the same text as canonical().
  const sortedKeys = (_key: string, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value;
  const content = [
    event.metric,
    event.timestamp?.getTime() ?? null,
    event.subscriptionId ?? null,
    event.properties ?? {},
  ];
  return hash('sha256', JSON.stringify(content, sortedKeys), 'base64url');
}

const eventArbitrary = fc.record(
  {
    customerId: fc.constant('00000000-0000-4000-8000-000000000000'),
    transactionId: fc.string({ minLength: 1 }),
    metric: fc.string({ minLength: 1, maxLength: 64 }),
    timestamp: fc.date({ min: new Date('2001-01-01'), max: new Date('2099-01-01'), noInvalidDate: true }),
    subscriptionId: fc.uuid(),
    properties: fc.dictionary(fc.string(), fc.jsonValue()),
  },
  { requiredKeys: ['customerId', 'transactionId', 'metric'] },
);

test('U-6: the content hash is the one first stored, for any content (an upgrade keeps retries duplicates)', (t) => {
  fc.assert(
    fc.property(eventArbitrary, (event) => {
      t.is(contentHash(event), referenceHash(event));
      t.is(batchContentHasher()(event), referenceHash(event));
    }),
    { numRuns: 500 },
  );
  const hashOf = batchContentHasher();
  const bare = { customerId: 'c', transactionId: 'a', metric: 'api_calls' };
  t.is(hashOf(bare), referenceHash(bare));
  t.is(hashOf({ ...bare, transactionId: 'b' }), referenceHash(bare));
  t.not(hashOf({ ...bare, metric: 'other' }), referenceHash(bare));
});

test("U-6: the months probed for a key under another month: a one-month batch's neighbours, to its horizon", (t) => {
  const mid = new Date('2026-11-15T12:00:00Z');
  t.deepEqual(probeMonths(['2026-11-01'], mid), ['2026-09-01', '2026-10-01']);
  // Within 5 minutes of a month's end an event may have been stamped in the next month.
  t.deepEqual(probeMonths(['2026-11-01'], new Date('2026-12-01T00:04:00Z')), [
    '2026-09-01',
    '2026-10-01',
    '2026-12-01',
  ]);
  // A batch spanning months probes every month of its window, its own too (a key there is a conflict all the same).
  t.deepEqual(probeMonths(['2026-10-01', '2026-11-01'], mid), ['2026-08-01', '2026-09-01', '2026-10-01', '2026-11-01']);
  // Never past KEY_MONTHS after the batch's latest month, whatever the horizon.
  t.deepEqual(probeMonths(['2026-01-01'], new Date('2026-12-01T00:00:00Z')), [
    '2025-11-01',
    '2025-12-01',
    '2026-02-01',
    '2026-03-01',
  ]);
});
