/** T-7 on the hosted invoice page (H-2): one line per rate as the PDF prints them, and a reverse charge's note. */
import test from 'ava';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { loginAsAdmin } from '../helpers/auth.ts';
import { adminApi, type Api } from '../subscriptions/fixtures.ts';

let app: TestApp;
let api: Api;
test.before(async () => {
  app = await startTestApp();
  const { cookie } = await loginAsAdmin(app.baseUrl, app.db);
  api = adminApi(app, cookie);
});
test.after.always(async () => app?.close());

async function hostedText(body: Record<string, unknown>): Promise<string> {
  const res = await api('/api/billing/invoices', { body: { status: 'issued', ...body } });
  if (res.status !== 201) throw new Error(res.text);
  const page = await fetch(`${app.baseUrl}${new URL(res.body.hostedUrl).pathname}`);
  if (page.status !== 200) throw new Error(`hosted page: ${page.status}`);
  return (await page.text()).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
}

test('the hosted page lists each rate as "VAT DE 19% on 100.00: 19.00" and the reverse-charge note', async (t) => {
  const vat = (await api('/api/billing/tax-rates', { body: { name: 'VAT DE', percentage: '19' } })).body.id;
  const levy = (await api('/api/billing/tax-rates', { body: { name: 'Levy', percentage: '2.5' } })).body.id;
  const buyer = (await api('/api/customers', { body: { name: 'Köln GmbH', email: 'ap@koeln.example' } })).body;
  const taxed = await hostedText({
    customerId: buyer.id,
    taxRateIds: [vat, levy],
    lineItems: [{ description: 'Annual licence', quantity: 1, unitPrice: '100.00' }],
  });
  t.true(taxed.includes('VAT DE 19% on 100.00: 19.00'), taxed);
  t.true(taxed.includes('Levy 2.5% on 100.00: 2.50'), taxed);
  const reverse = (
    await api('/api/customers', {
      body: { name: 'Lyon SARL', email: 'ap@lyon.example', taxExempt: 'reverse', taxId: 'FR40303265045' },
    })
  ).body;
  const noted = await hostedText({
    customerId: reverse.id,
    lineItems: [{ description: 'Annual licence', quantity: 1, unitPrice: '100.00' }],
  });
  t.true(
    noted.includes('Reverse charge: VAT to be accounted for by the recipient. Customer tax ID: FR40303265045'),
    noted,
  );
});
