/**
 * T-2..T-6 over the admin API: which rates an invoice takes (its lines', its own, the plan's, the customer's, the
 * default setting's), exempt and reverse-charge customers, the rates copied at issue, credit notes' share, and the
 * PDF text of a reverse-charge invoice. Each test has customers and rates of its own.
 */
import test from 'ava';
import { closeSharedBrowser } from '../../src/invoices/pdf/shared-browser.ts';
import { money } from '../../src/money.ts';
import { renderInvoicePdfHandler } from '../../src/invoices/pdf/render-pdf.handler.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { pdfText } from '../invoices-pdf/helpers.ts';
import { adminApi, planHttp, type Api } from '../subscriptions/fixtures.ts';

let app: TestApp;
let api: Api;
test.before(async () => {
  app = await startTestApp();
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  api = adminApi(app, cookie);
});
test.after.always(async () => {
  await closeSharedBrowser();
  await app?.close();
});

let n = 0;
async function rate(percentage: string, inclusive = false, name = `Rate ${percentage}`): Promise<string> {
  const res = await api('/api/billing/tax-rates', { body: { name, percentage, inclusive } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body.id;
}
async function customer(body: Record<string, unknown> = {}) {
  n += 1;
  const res = await api('/api/customers', { body: { name: `Taxed ${n}`, email: `taxed-${n}@example.test`, ...body } });
  if (res.status !== 201) throw new Error(res.text);
  return res.body as { id: string };
}
const invoice = async (body: Record<string, unknown>) => api('/api/billing/invoices', { body });
const line = (unitPrice: string, extra: Record<string, unknown> = {}) => ({
  description: 'Item',
  quantity: 1,
  unitPrice,
  ...extra,
});
const invoiceCount = async (customerId: string) =>
  Number((await app.db('invoices').where({ customer_id: customerId }).count({ n: '*' }))[0]!.n);

test('T-4: three lines of 0.05 at 10% exclusive carry tax 0.02, rounded once for the rate', async (t) => {
  const gst = await rate('10', false, 'GST');
  const c = await customer();
  const res = await invoice({
    customerId: c.id,
    taxRateIds: [gst],
    lineItems: [line('0.05'), line('0.05'), line('0.05')],
  });
  t.is(res.status, 201, res.text);
  t.like(res.body, { subtotal: '0.15', taxAmount: '0.02', total: '0.17', taxRate: '0' });
  t.deepEqual(res.body.taxes, [
    { taxRateId: gst, name: 'GST', percentage: '10', inclusive: false, taxableAmount: '0.15', amount: '0.02' },
  ]);
  t.deepEqual(
    res.body.lineItems.map((l: { taxRateIds: string[] }) => l.taxRateIds),
    [[gst], [gst], [gst]],
  );
});

test('T-4: an inclusive rate keeps the price: 119.00 with 19% included is 100.00 net + 19.00 tax', async (t) => {
  const vat = await rate('19', true, 'VAT DE');
  const c = await customer();
  const res = await invoice({ customerId: c.id, taxRateIds: [vat], lineItems: [line('119.00')] });
  t.like(res.body, { subtotal: '100.00', taxAmount: '19.00', total: '119.00', amountDue: '119.00' });
  t.like(res.body.taxes[0], { name: 'VAT DE', inclusive: true, taxableAmount: '100.00', amount: '19.00' });
});

test("T-2: a line's own rates win over the invoice's; several rates on a line add up on its net", async (t) => {
  const state = await rate('5', false, 'State');
  const city = await rate('2.5', false, 'City');
  const reduced = await rate('7', false, 'Reduced');
  const c = await customer();
  const res = await invoice({
    customerId: c.id,
    taxRateIds: [state, city],
    lineItems: [line('100.00'), line('50.00', { taxRateIds: [reduced] }), line('10.00', { taxRateIds: [] })],
  });
  t.is(res.status, 201, res.text);
  t.like(res.body, { subtotal: '160.00', taxAmount: '11.00', total: '171.00' });
  t.deepEqual(
    res.body.taxes.map((x: { name: string; taxableAmount: string; amount: string }) => [
      x.name,
      x.taxableAmount,
      x.amount,
    ]),
    [
      ['State', '100.00', '5.00'],
      ['City', '100.00', '2.50'],
      ['Reduced', '50.00', '3.50'],
    ],
  );
  t.deepEqual(res.body.lineItems[2].taxRateIds, []);
});

test('T-2: refused rate lists are 400 naming the field and create nothing', async (t) => {
  const vat = await rate('19', true);
  const other = await rate('20', true);
  const archived = await rate('3');
  await api(`/api/billing/tax-rates/${archived}`, { method: 'PUT', body: { active: false } });
  const c = await customer();
  const before = await invoiceCount(c.id);
  const cases: [Record<string, unknown>, string][] = [
    [{ taxRate: '8', taxRateIds: [vat], lineItems: [line('10.00')] }, 'taxRate'],
    [{ taxRate: '8', lineItems: [line('10.00', { taxRateIds: [vat] })] }, 'taxRate'],
    [{ taxRateIds: ['00000000-0000-4000-8000-000000000000'], lineItems: [line('10.00')] }, 'taxRateIds'],
    [{ lineItems: [line('10.00'), line('1.00', { taxRateIds: [archived] })] }, 'lineItems.1.taxRateIds'],
    [{ taxRateIds: [vat, other], lineItems: [line('10.00')] }, 'taxRateIds'],
    [{ taxRateIds: [vat, vat], lineItems: [line('10.00')] }, 'taxRateIds'],
  ];
  for (const [body, path] of cases) {
    const res = await invoice({ customerId: c.id, ...body });
    t.is(res.status, 400, JSON.stringify(body));
    t.true(
      res.body.error.details.some((d: { path: string }) => d.path === path),
      res.text,
    );
  }
  t.is(await invoiceCount(c.id), before);
  const plan = await api('/api/billing/plans', {
    body: {
      productId: (await api('/api/products', { body: { name: 'P', productType: 'saas', price: '1' } })).body.id,
      name: 'Refused',
      pricingModel: 'flat',
      billingCycle: 'monthly',
      basePrice: '1.00',
      currency: 'USD',
      taxRateIds: [archived],
    },
  });
  t.is(plan.status, 400);
  t.is(plan.body.error.code, 'tax_rate_inactive');
  t.is(plan.body.error.details[0].path, 'taxRateIds');
  const refusedCustomer = await api('/api/customers', {
    body: { name: 'Refused', email: 'refused-rates@example.test', taxRateIds: [archived] },
  });
  t.is(refusedCustomer.status, 400);
  t.is(await app.db('customers').where({ email: 'refused-rates@example.test' }).first(), undefined);
});

// Serial (ava runs these first, alone): it changes the default setting, which every other invoice would read.
test.serial(
  "T-2: a subscription's invoice takes its plan's rates, else the customer's, else the default setting's",
  async (t) => {
    const planRate = await rate('19', false, 'Plan VAT');
    const customerRate = await rate('10', false, 'Customer GST');
    const defaultRate = await rate('8', false, 'Default');
    const taxedPlan = await planHttp(api, { basePrice: '100.00', taxRateIds: [planRate] });
    const plainPlan = await planHttp(api, { basePrice: '100.00' });
    const subscribe = async (customerId: string, planId: string) => {
      const res = await api('/api/billing/subscriptions', { body: { customerId, planId, billingCycle: 'monthly' } });
      t.is(res.status, 201, res.text);
      return (await app.db('invoices').where({ subscription_id: res.body.id }).first()) as {
        taxes: { name: string; amount: string }[];
        total: string;
      };
    };
    const withRates = await customer({ taxRateIds: [customerRate] });
    t.deepEqual(
      (await subscribe(withRates.id, taxedPlan.id)).taxes.map((x) => [x.name, x.amount]),
      [['Plan VAT', '19.00']],
    );
    t.deepEqual(
      (await subscribe(withRates.id, plainPlan.id)).taxes.map((x) => [x.name, x.amount]),
      [['Customer GST', '10.00']],
    );
    const plain = await customer();
    t.deepEqual((await subscribe(plain.id, plainPlan.id)).taxes, []);
    const setting = await api('/api/settings', {
      method: 'PUT',
      body: { 'billing.default_tax_rate_ids': [defaultRate] },
    });
    t.is(setting.status, 200, setting.text);
    const other = await customer();
    const defaulted = await subscribe(other.id, plainPlan.id);
    t.deepEqual(
      defaulted.taxes.map((x) => [x.name, x.amount]),
      [['Default', '8.00']],
    );
    t.is(money(defaulted.total).toFixed(2), '108.00');
    await api('/api/settings', { method: 'PUT', body: { 'billing.default_tax_rate_ids': [] } });
  },
);

test('T-3: exempt customers pay no tax; reverse charge needs a tax ID and puts the note on the invoice', async (t) => {
  const vat = await rate('19', false, 'VAT DE');
  const exempt = await customer({ taxExempt: 'exempt', taxRateIds: [vat] });
  const exemptInvoice = await invoice({ customerId: exempt.id, taxRateIds: [vat], lineItems: [line('100.00')] });
  t.like(exemptInvoice.body, { taxAmount: '0.00', total: '100.00', taxExempt: 'exempt', taxNote: null });
  t.deepEqual(exemptInvoice.body.taxes, []);

  const refused = await api('/api/customers', {
    body: { name: 'No tax id', email: 'reverse-no-id@example.test', taxExempt: 'reverse' },
  });
  t.is(refused.status, 400);
  t.is(refused.body.error.details[0].path, 'taxId');
  const reverse = await customer({ taxExempt: 'reverse', taxId: 'FR40303265045' });
  const cleared = await api(`/api/customers/${reverse.id}`, { method: 'PUT', body: { taxId: null } });
  t.is(cleared.status, 400);
  t.is(cleared.body.error.details[0].path, 'taxId');

  const res = await invoice({ customerId: reverse.id, taxRateIds: [vat], lineItems: [line('250.00')] });
  t.like(res.body, { taxAmount: '0.00', total: '250.00', taxExempt: 'reverse' });
  t.is(res.body.taxNote, 'Reverse charge: VAT to be accounted for by the recipient. Customer tax ID: FR40303265045');
  const ctx = { jobId: 'test', retryCount: 0 };
  const rendered = await renderInvoicePdfHandler.run(app.deps, { invoiceId: res.body.id, contentVersion: 1 }, ctx);
  t.like(rendered, { outcome: 'stored' });
  const row = await app.db('invoice_pdfs').where({ invoice_id: res.body.id }).first();
  const text = (await pdfText(row.pdf)).replace(/\s+/g, ' ');
  t.true(text.includes('Reverse charge: VAT to be accounted for by the recipient'), text);
  t.true(text.includes('FR40303265045'), text);
});

test('T-5: an issued invoice keeps its taxes when its rate, plan or customer changes later', async (t) => {
  const vat = await rate('19', false, 'VAT DE');
  const plan = await planHttp(api, { basePrice: '40.00', taxRateIds: [vat] });
  const c = await customer();
  const sub = await api('/api/billing/subscriptions', {
    body: { customerId: c.id, planId: plan.id, billingCycle: 'monthly' },
  });
  const id = (await app.db('invoices').where({ subscription_id: sub.body.id }).first()).id;
  const before = await api(`/api/billing/invoices/${id}`);
  t.like(before.body, { subtotal: '40.00', taxAmount: '7.60', total: '47.60' });
  await api(`/api/billing/tax-rates/${vat}`, { method: 'PUT', body: { name: 'Renamed', active: false } });
  await api(`/api/billing/plans/${plan.id}`, { method: 'PUT', body: { taxRateIds: [] } });
  await api(`/api/customers/${c.id}`, { method: 'PUT', body: { taxExempt: 'exempt' } });
  t.deepEqual((await api(`/api/billing/invoices/${id}`)).body, before.body);
});

test("D-51's taxRate still works, as one entry named Tax; a credit note reverses its share (T-6)", async (t) => {
  const c = await customer();
  const res = await invoice({ customerId: c.id, taxRate: '10', status: 'issued', lineItems: [line('200.00')] });
  t.like(res.body, { taxRate: '10', taxAmount: '20.00', total: '220.00' });
  t.deepEqual(res.body.taxes, [
    { taxRateId: null, name: 'Tax', percentage: '10', inclusive: false, taxableAmount: '200.00', amount: '20.00' },
  ]);
  const note = await api('/api/billing/credit-notes', {
    body: { invoiceId: res.body.id, amount: '110.00', reason: 'Half the hours were not delivered' },
  });
  t.is(note.status, 201, note.text);
  t.deepEqual(note.body.taxes, [
    { taxRateId: null, name: 'Tax', percentage: '10', inclusive: false, taxableAmount: '100.00', amount: '10.00' },
  ]);
});
