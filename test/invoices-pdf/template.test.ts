/** The invoice template on its own: escaping, amounts and the optional rows (no database, no browser). */
import test from 'ava';
import type { InvoiceRow, LineItemRow } from '../../src/invoices/repo.ts';
import { displayAmount, escapeHtml, renderInvoiceHtml, type InvoiceDocument } from '../../src/invoices/pdf/template.ts';
import { groupDigits } from '../../src/money.ts';

const at = new Date('2026-11-22T12:00:00Z');

function invoice(overrides: Partial<InvoiceRow> = {}): InvoiceRow {
  return {
    id: '00000000-0000-4000-8000-000000000001',
    customer_id: '00000000-0000-4000-8000-000000000002',
    subscription_id: null,
    invoice_number: 'INV-2026-0007',
    status: 'draft',
    currency: 'USD',
    tax_rate: '8.25',
    subtotal: '1234.5',
    tax_amount: '101.85',
    total: '1336.35',
    amount_paid: '0',
    credit_applied: '0',
    credited_amount: '0',
    due_date: new Date('2026-12-06T12:00:00Z'),
    issued_at: null,
    paid_at: null,
    voided_at: null,
    overdue_at: null,
    period_start: null,
    period_end: null,
    taxes: [],
    tax_exempt: 'none',
    buyer_tax_id: null,
    content_version: 1,
    created_at: at,
    updated_at: at,
    ...overrides,
  };
}

const line = (description: string, overrides: Partial<LineItemRow> = {}): LineItemRow => ({
  id: 'l1',
  invoice_id: 'i',
  position: 1,
  description,
  quantity: 2,
  unit_price: '617.25',
  amount: '1234.5',
  tax_rate_ids: [],
  ...overrides,
});

function doc(overrides: Partial<InvoiceDocument> = {}): InvoiceDocument {
  return {
    invoice: invoice(),
    lines: [line('Consulting')],
    customer: { name: 'Ada Lovelace', email: 'ada@example.test', company: null, billing_address: null, tax_id: null },
    seller: { name: 'Acme Inc.', address: '1 Main St', email: 'billing@acme.test', taxId: 'US-1' },
    ...overrides,
  };
}

test('escapeHtml escapes the five HTML-significant characters', (t) => {
  t.is(escapeHtml(`<a href="x" onclick='y'>&</a>`), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  t.is(escapeHtml(null), '');
});

test('a customer named <script> is printed as text, never as markup', (t) => {
  const evil = '<script>alert("x")</script>';
  const html = renderInvoiceHtml(
    doc({
      customer: {
        name: evil,
        email: `"><img src=x onerror=alert(1)>@x.test`,
        company: '<b>Co</b>',
        billing_address: '<iframe src="https://evil.test">\nStreet 1',
        tax_id: "'; drop",
      },
      seller: { name: '<style>*{display:none}</style>', address: '<svg onload=x>', email: '<a>', taxId: '&' },
      lines: [line('</td></tr></table><script>steal()</script>')],
      invoice: invoice({ invoice_number: 'INV-<i>' }),
    }),
  );
  t.false(html.includes('<script'), 'no script element');
  t.false(html.includes('<img'), 'no img element');
  t.false(html.includes('<iframe'), 'no iframe element');
  t.false(html.includes('<svg'), 'no svg element');
  t.false(html.includes('<b>Co'), 'no markup from the company');
  t.is(html.match(/<style>/g)?.length, 1, 'only the template style element');
  t.true(html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'));
  t.true(html.includes('&lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;steal()&lt;/script&gt;'));
  t.true(html.includes('INV-&lt;i&gt;'));
  // Line breaks of an address survive as <br>, the rest of it as text.
  t.true(html.includes('&lt;iframe src=&quot;https://evil.test&quot;&gt;<br>Street 1'));
});

test('amounts are formatted in the currency minor units with grouped digits', (t) => {
  t.is(groupDigits('1234567.50'), '1,234,567.50');
  t.is(groupDigits('-1234.5'), '-1,234.5');
  t.is(groupDigits('999'), '999');
  t.is(displayAmount('1234.5', 'USD'), '1,234.50');
  t.is(displayAmount('1234.5', 'JPY'), '1,235');
  t.is(displayAmount('0.0005', 'KWD'), '0.001');

  const html = renderInvoiceHtml(doc());
  for (const text of [
    '1,234.50',
    '617.25',
    'Tax (8.25%)',
    '101.85',
    'USD 1,336.35',
    'INV-2026-0007',
    'December 6, 2026',
    'Ada Lovelace',
    'Acme Inc.',
    'Tax ID: US-1',
  ]) {
    t.true(html.includes(text), text);
  }
});

test('paid, credited and credit-note amounts appear only when there are any, and the amount due follows them', (t) => {
  const plain = renderInvoiceHtml(doc());
  t.false(plain.includes('Amount paid'));
  t.false(plain.includes('Credit applied'));
  t.true(plain.includes('Amount due'));
  t.regex(plain, /Amount due<\/td><td class="num">USD 1,336.35</, 'a draft owes its total');

  const issued = renderInvoiceHtml(
    doc({
      invoice: invoice({
        status: 'issued',
        issued_at: at,
        amount_paid: '300',
        credit_applied: '36.35',
        credited_amount: '0',
      }),
    }),
  );
  t.true(issued.includes('Amount paid'));
  t.true(issued.includes('-300.00'));
  t.true(issued.includes('Credit applied'));
  t.true(issued.includes('-36.35'));
  t.false(issued.includes('Credit notes'));
  t.regex(issued, /Amount due<\/td><td class="num">USD 1,000.00</);
  t.regex(issued, /<dt>Status<\/dt><dd>Issued<\/dd>/);

  const paid = renderInvoiceHtml(doc({ invoice: invoice({ status: 'paid', paid_at: at, amount_paid: '1336.35' }) }));
  t.regex(paid, /Amount due<\/td><td class="num">USD 0.00</);
  t.true(paid.includes('Paid on'));

  const voided = renderInvoiceHtml(doc({ invoice: invoice({ status: 'void', voided_at: at }) }));
  t.true(voided.includes('voided and is not payable'));
});

test('the page is self-contained: no script, no external reference', (t) => {
  const html = renderInvoiceHtml(doc());
  t.false(/<script|<link|<img|src=|url\(|@import/i.test(html));
});
