import test from 'ava';
import { AppError } from '../../src/errors.ts';
import { recordPayment } from '../../src/payments/service.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { backendPid, waitUntilBlocked } from '../helpers/wait.ts';
import { adminCtx, makeInvoice, pay, readInvoice, type Ctx } from './fixtures.ts';
import { SYSTEM_ACTOR } from '../../src/actor.ts';

let app: TestApp;
let c: Ctx;
test.before(async () => {
  app = await startTestApp();
  c = await adminCtx(app);
});
test.after.always(async () => app?.close());

const tally = (statuses: string[]) => {
  const counts: Record<string, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
};

test('20 concurrent payments of the full amount: exactly one 201, the rest 400 amount_exceeds_due', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '250.00' });
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => pay(c, { invoiceId: invoice.id, amount: '250.00' })),
  );
  t.deepEqual(tally(answers.map((r) => (r.status === 201 ? '201' : `${r.status} ${r.body.error.code}`))), {
    '201': 1,
    '400 amount_exceeds_due': 19,
  });
  const row = await app.db('invoices').where({ id: invoice.id }).first();
  t.is(row.amount_paid, '250.00');
  t.is(row.total, '250');
  t.is(row.status, 'paid');
  t.is((await app.db('payments').where({ invoice_id: invoice.id })).length, 1);
  t.is(
    (await app.db('events').where({ type: 'invoice.paid' }).whereRaw("data->>'invoiceId' = ?", [invoice.id])).length,
    1,
  );
});

test('20 concurrent partial payments that together exceed the total never overpay', async (t) => {
  const invoice = await makeInvoice(c, { unitPrice: '100.00' });
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => pay(c, { invoiceId: invoice.id, amount: '7.00' })),
  );
  // 14 x 7.00 = 98.00 fit; the 15th would need 105.00.
  t.is(answers.filter((r) => r.status === 201).length, 14);
  t.true(answers.filter((r) => r.status !== 201).every((r) => r.body.error.code === 'amount_exceeds_due'));
  t.like(await readInvoice(c, invoice.id), { status: 'issued', amountPaid: '98.00', amountDue: '2.00' });
});

test(
  '20 concurrent payments with one provider reference on one invoice: ' + 'one 201, the rest 409 duplicate_payment',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '100.00' });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        pay(c, {
          invoiceId: invoice.id,
          amount: '1.00',
          paymentMethod: 'provider_a',
          providerReference: 'pi_same_invoice',
        }),
      ),
    );
    t.deepEqual(tally(answers.map((r) => (r.status === 201 ? '201' : `${r.status} ${r.body.error.code}`))), {
      '201': 1,
      '409 duplicate_payment': 19,
    });
    t.is((await readInvoice(c, invoice.id)).amountPaid, '1.00');
  },
);

test(
  'concurrent payments with one provider reference on different invoices: ' + 'the unique index lets one through',
  async (t) => {
    const invoices = await Promise.all(Array.from({ length: 10 }, () => makeInvoice(c)));
    const answers = await Promise.all(
      invoices.map((i) =>
        pay(c, { invoiceId: i.id, amount: '5.00', paymentMethod: 'provider_c', providerReference: 'ord_many' }),
      ),
    );
    t.deepEqual(tally(answers.map((r) => (r.status === 201 ? '201' : `${r.status} ${r.body.error.code}`))), {
      '201': 1,
      '409 duplicate_payment': 9,
    });
    const paid = await app
      .db('invoices')
      .whereIn(
        'id',
        invoices.map((i) => i.id),
      )
      .where('amount_paid', '>', 0);
    t.is(paid.length, 1);
  },
);

test(
  'recordPayment: a replayed provider event is duplicate_payment even once the invoice is paid, and the caller ' +
    'transaction stays usable',
  async (t) => {
    const invoice = await makeInvoice(c, { unitPrice: '30.00' });
    const input = {
      invoiceId: invoice.id,
      amount: '30.00',
      paymentMethod: 'provider_a' as const,
      providerReference: 'pi_webhook_1',
    };
    const first = await recordPayment(app.db, input, SYSTEM_ACTOR);
    t.is(first.amount, '30.00');
    await app.db.transaction(async (trx) => {
      const error = await t.throwsAsync(recordPayment(trx, input, SYSTEM_ACTOR), { instanceOf: AppError });
      t.is((error as AppError).code, 'duplicate_payment');
      // The caller's transaction was not aborted by the refusal.
      t.is((await trx('payments').where({ provider_reference: 'pi_webhook_1' })).length, 1);
    });
    // Same reference on another invoice: the unique index's refusal, inside a caller's transaction.
    const other = await makeInvoice(c, { unitPrice: '30.00' });
    await app.db.transaction(async (trx) => {
      await trx('events').count();
      const error = await t.throwsAsync(recordPayment(trx, { ...input, invoiceId: other.id }, SYSTEM_ACTOR), {
        instanceOf: AppError,
      });
      t.is((error as AppError).code, 'duplicate_payment');
      t.is((await trx('payments').where({ invoice_id: other.id })).length, 0);
    });
    t.is((await readInvoice(c, invoice.id)).status, 'paid');
  },
);

test('recordPayment validates like the route: a number amount is invalid_request', async (t) => {
  const invoice = await makeInvoice(c);
  const error = await t.throwsAsync(
    recordPayment(
      app.db,
      { invoiceId: invoice.id, amount: 5 as unknown as string, paymentMethod: 'manual' },
      SYSTEM_ACTOR,
    ),
    { instanceOf: AppError },
  );
  t.is((error as AppError).code, 'invalid_request');
});

test(
  'the unique index decides between two uncommitted ' + 'payments with one reference on different invoices',
  async (t) => {
    const [a, b] = await Promise.all([makeInvoice(c), makeInvoice(c)]);
    const trx = await app.db.transaction();
    await recordPayment(
      trx,
      { invoiceId: a.id, amount: '5.00', paymentMethod: 'provider_b', providerReference: 'inv_race' },
      SYSTEM_ACTOR,
    );
    // The second insert waits on the first's uncommitted index entry (the pre-check cannot see it yet).
    const second = recordPayment(
      app.db,
      { invoiceId: b.id, amount: '5.00', paymentMethod: 'provider_b', providerReference: 'inv_race' },
      SYSTEM_ACTOR,
    );
    await waitUntilBlocked(app.db, await backendPid(trx));
    await trx.commit();
    const error = await t.throwsAsync(second, { instanceOf: AppError });
    t.is((error as AppError).code, 'duplicate_payment');
    t.is((await readInvoice(c, b.id)).amountPaid, '0.00');
  },
);
