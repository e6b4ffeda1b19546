/**
 * db/timestamptz.ts reads a UTC timestamptz by position and hands every other form to pg's general parser: the
 * same instants as that parser, for the server's own output of random instants and of the forms it treats apart.
 */
import test from 'ava';
import fc from 'fast-check';
import { generalTimestamptz as general, parseTimestamptz } from '../../src/db/timestamptz.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;
test.before(async () => {
  database = await createTestDatabase();
});
test.after.always(async () => database?.drop());

const same = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date
    ? a.getTime() === b.getTime() || (Number.isNaN(+a) && Number.isNaN(+b))
    : a === b;

test("the server's text of random instants reads as the same instant, to the millisecond", async (t) => {
  // Microseconds since 1970, from the year 1 to 9999: the early ones take the general path.
  const micros = fc.sample(fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_000_000n }), 400);
  const { rows } = await database.knex.raw(
    `select ts::text as text, floor(extract(epoch from ts) * 1000)::int8 as ms
       from unnest(?::int8[]) as m, lateral (select timestamptz 'epoch' + m * interval '1 microsecond' as ts) as v`,
    [micros.map(String)],
  );
  t.regex(rows[0].text, /\+00$/, 'the session is in UTC, the form read by position');
  for (const { text, ms } of rows as { text: string; ms: number }[]) {
    t.is((parseTimestamptz(text) as Date).getTime(), ms, text);
  }
});

test('other forms take the general path: an offset, BC, early years, infinity, a malformed text', (t) => {
  const texts = [
    '2026-02-16 00:00:00+00',
    '2026-02-16 00:00:00.5+00',
    '2026-02-16 23:59:59.999999+00',
    '2026-02-16 00:00:00+05:30',
    '2026-02-16 00:00:00-08',
    '0099-01-01 00:00:00+00',
    '0001-01-01 00:00:00+00 BC',
    '12026-01-01 00:00:00+00',
    'infinity',
    '-infinity',
    '2026-0x-16 00:00:00+00',
  ];
  for (const text of texts) {
    const expected = general(text);
    t.true(same(parseTimestamptz(text), expected), text);
  }
  t.is((parseTimestamptz('2026-02-16 00:00:00.5+00') as Date).toISOString(), '2026-02-16T00:00:00.500Z');
});
