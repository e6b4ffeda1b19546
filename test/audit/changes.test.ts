/**
 * audit/changes.ts changedFields (C-11): only changed fields, under their API names, secrets redacted, any field name
 * a field like any other; checked against a plain reference for random objects (fast-check).
 */
import test from 'ava';
import fc from 'fast-check';
import { changedFields, REDACTED } from '../../src/audit/changes.ts';
import { money } from '../../src/money.ts';

test('a renewal: the changed fields on each side, dates as ISO text, bookkeeping fields left out', (t) => {
  const start = new Date('2026-01-16T00:00:00.000Z');
  const end = new Date('2026-02-16T00:00:00.000Z');
  const before = { status: 'active', period_number: 1, current_period_end: start, updated_at: start };
  const after = { status: 'active', period_number: 2, current_period_end: end, updated_at: end, invoice_ids: ['a'] };
  t.deepEqual(changedFields(before, after), {
    before: { periodNumber: 1, currentPeriodEnd: '2026-01-16T00:00:00.000Z' },
    after: { periodNumber: 2, currentPeriodEnd: '2026-02-16T00:00:00.000Z', invoiceIds: ['a'] },
  });
});

test('a create has no before, a delete no after; an unchanged update answers two empty objects', (t) => {
  t.deepEqual(changedFields(null, { name: 'A', price: money('9.50') }), {
    before: null,
    after: { name: 'A', price: '9.5' },
  });
  t.deepEqual(changedFields({ name: 'A' }, null), { before: { name: 'A' }, after: null });
  t.deepEqual(changedFields({ name: 'A', tags: { x: 1 } }, { name: 'A', tags: { x: 1 } }), { before: {}, after: {} });
});

test('secrets are redacted on both sides; undefined is no field; odd names are fields like others', (t) => {
  const { before, after } = changedFields(
    { password_hash: 'old', constructor: 'x', toString: 1, skipped: undefined },
    { password_hash: 'new', constructor: 'y', toString: 1 },
  );
  t.deepEqual(before, { passwordHash: REDACTED, constructor: 'x' });
  t.deepEqual(after, { passwordHash: REDACTED, constructor: 'y' });
  // A body's own `__proto__` field (JSON.parse makes it an own field) is recorded, not taken as a prototype.
  t.deepEqual(changedFields({}, JSON.parse('{"__proto__": 1}')).after, { _Proto__: 1 });
});

/** The reference: every field of either side whose JSON differs, by its camelCase name, secrets as REDACTED. */
function reference(before: Record<string, unknown>, after: Record<string, unknown>) {
  const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
  const outBefore: Record<string, unknown> = {};
  const outAfter: Record<string, unknown> = {};
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const key of keys) {
    const b = JSON.stringify(before[key] ?? null);
    const a = JSON.stringify(after[key] ?? null);
    if (b === a) continue;
    const secret = /secret|password|token|hash|private|^key$|apikey|signingkey|credential/i.test(camel(key));
    if (key in before) outBefore[camel(key)] = secret ? REDACTED : before[key];
    if (key in after) outAfter[camel(key)] = secret ? REDACTED : after[key];
  }
  return { before: outBefore, after: outAfter };
}

test('random objects: the same answer as the reference', (t) => {
  const key = fc.constantFrom('name', 'status', 'period_number', 'api_token', 'tags', 'note', 'amount');
  const list = fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 });
  const value = fc.oneof(
    fc.string({ maxLength: 4 }),
    fc.integer({ min: 0, max: 3 }),
    fc.boolean(),
    fc.constant(null),
    list,
  );
  const fields = fc.dictionary(key, value, { maxKeys: 5 });
  fc.assert(
    fc.property(fields, fields, (before, after) => {
      t.deepEqual(changedFields(before, after), reference(before, after));
    }),
    { numRuns: 500 },
  );
});
