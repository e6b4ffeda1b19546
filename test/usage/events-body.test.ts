import test from 'ava';
import fc from 'fast-check';
import { parseOrThrow } from '../../src/http/validate.ts';
import { readV1EventsBody } from '../../src/usage-api/events-body.ts';
import { v1EventsBody } from '../../src/usage-api/schema.ts';

/** What the generic path answers: the schema's output, or that it refused. */
function generic(body: unknown): unknown {
  try {
    return parseOrThrow(v1EventsBody, body, 'body');
  } catch {
    return 'refused';
  }
}

const oddText = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom(
    '',
    '\u0000',
    'a\ud800',
    '\udc00b',
    'ok\ud83d\ude00',
    'x'.repeat(64),
    'x'.repeat(65),
    'y'.repeat(201),
  ),
);
const oddValue = fc.oneof(
  oddText,
  fc.integer(),
  fc.constantFrom(null, true, [], {}, 1.5),
  fc.constantFrom('2026-11-29T10:00:00Z', '2026-11-29', 'not a date', '0000-01-01', '2026-02-30'),
  fc.constantFrom('5b0e3c56-3f3d-4a4e-9a3c-0d5c2f4b8e11', '5B0E3C56-3F3D-4A4E-9A3C-0D5C2F4B8E11', 'not-a-uuid'),
);
const properties = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.jsonValue(), oddValue), { maxKeys: 4 }),
  fc.constantFrom(JSON.parse('{"__proto__": {"a": 1}}'), { nested: { deep: ['\u0000'] } }, { '\ud800': 1 }, []),
);
const mostly = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: oddValue });
const event = fc.record(
  {
    transactionId: mostly(fc.string({ minLength: 1, maxLength: 30 })),
    metric: mostly(fc.string({ minLength: 1, maxLength: 10 })),
    timestamp: mostly(
      fc
        .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString()),
    ),
    subscriptionId: mostly(fc.uuid()),
    properties: fc.oneof({ weight: 6, arbitrary: properties }, { weight: 1, arbitrary: oddValue }),
  },
  { requiredKeys: [] },
);
const body = fc.oneof(
  { weight: 6, arbitrary: fc.record({ events: fc.array(event, { maxLength: 3 }) }) },
  fc.record({ events: fc.array(fc.record({ transactionId: fc.string(), metric: fc.string(), extra: oddValue })) }),
  fc.record({ events: fc.array(event, { minLength: 1, maxLength: 3 }), other: oddValue }),
  oddValue,
);

test('U-6: the hand-read events body answers as the schema does, and vouches for nothing it refuses', (t) => {
  let vouched = 0;
  fc.assert(
    fc.property(body, (input) => {
      // JSON's own round trip: a request body holds nothing else.
      const sent = JSON.parse(JSON.stringify(input) ?? 'null');
      const fast = readV1EventsBody(sent);
      const slow = generic(sent);
      if (fast !== undefined) {
        vouched++;
        t.deepEqual(fast, slow);
      } else t.pass();
    }),
    { numRuns: 3000 },
  );
  t.true(vouched > 100, `only ${vouched} bodies read by hand`);
});

test('U-6: 1,001 events or none are left to the schema, which refuses them; 1,000 plain events are read', (t) => {
  const events = (n: number) => ({
    events: Array.from({ length: n }, (_, i) => ({ transactionId: `t${i}`, metric: 'm' })),
  });
  t.is(readV1EventsBody(events(1001)), undefined);
  t.is(generic(events(1001)), 'refused');
  t.is(readV1EventsBody(events(0)), undefined);
  t.deepEqual(readV1EventsBody(events(1000)), generic(events(1000)));
});
