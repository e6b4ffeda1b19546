import { label } from '../components/labels.ts';
import { clockOfCustomer, TestClockNote } from './test-clocks.tsx';
import { listApiKeys } from '../../api-keys/service.ts';
import { auditEntriesOf } from '../../audit/service.ts';
import { listCreditLedger } from '../../credits/service.ts';
import { createCreditBody } from '../../credits/schema.ts';
import { updateCustomerBody } from '../../customers/schema.ts';
import { updateCustomer } from '../../customers/service.ts';
import { getCustomer } from '../../reporting/customer-view.ts';
import { eventId } from '../../events/schema.ts';
import { listCustomerEvents } from '../../events/service.ts';
import { uuid } from '../../http/schemas.ts';
import { parseOrThrow } from '../../http/validate.ts';
import { invoiceNumbers, listInvoices, openAmountsOfCustomers } from '../../invoices/service.ts';
import { listLicenses } from '../../licenses/service.ts';
import { sumMoney } from '../../money.ts';
import { listPayments } from '../../payments/service.ts';
import { findPlans } from '../../plans/service.ts';
import { customerCurrencies, grantCredit } from '../../settlement/service.ts';
import { allTaxRates } from '../../tax-rates/service.ts';
import { rateLabel } from '../components/TaxRateChoice.tsx';
import { z } from 'zod';
import { listEmails } from '../../emails/service.ts';
import { CustomerEmailsSection } from './emails.tsx';
import { AuditTrail } from '../components/AuditTrail.tsx';
import { Form } from '../components/Form.tsx';
import { CreditFields } from './customer-credit-fields.tsx';
import { money } from '../components/format.ts';
import { Layout } from '../components/Layout.tsx';
import { uuidParam } from '../http/params.ts';
import { defineAction, definePage } from '../http/route.ts';
import { typedField } from '../http/form.ts';
import { Amounts, creditAmounts, CustomerFields, customerFields, TAX_STATUS, When } from './customers-parts.tsx';
import { newInvoiceUrl } from './invoices.tsx';
import { newLicenseUrl } from './licenses.tsx';
import { newApiKeyUrl } from './settings-api-keys.tsx';
import { newSubscriptionUrl } from './subscriptions.tsx';
import { PortalLinkSection } from './customer-portal-link.tsx';
import { takeReveal } from '../http/reveal.ts';
import { servedOverHttps } from '../../http/cookies.ts';
import {
  ApiKeysSection,
  InvoicesSection,
  LedgerSection,
  LicensesSection,
  PaymentsSection,
  SubscriptionsSection,
  TimelineSection,
} from './customers-sections.tsx';

const SECTION_SIZE = 50;

const customerIdOf = (params: Record<string, string>) => uuidParam(params.id, 'Customer');

/** Everything the page shows, read in parallel, each list one query (C-9: no query per row). */
async function loadCustomer(db: Parameters<typeof getCustomer>[0], id: string, timelineAfter: string | undefined) {
  const { customer, subscriptions } = await getCustomer(db, id);
  const newest = { limit: SECTION_SIZE, newestFirst: true };
  const [owed, ledger, invoices, payments, licenses, apiKeys, timeline, plans, audit, currencies] = await Promise.all([
    openAmountsOfCustomers(db, [id]),
    listCreditLedger(db, newest, { customerId: id }),
    listInvoices(db, newest, { customerId: id }),
    listPayments(db, newest, { customerId: id }),
    listLicenses(db, newest, { customerId: id }),
    listApiKeys(db, newest, id),
    listCustomerEvents(db, id, { ...newest, startingAfter: timelineAfter }),
    findPlans(db, [...new Set(subscriptions.map((s) => s.plan_id))]),
    auditEntriesOf(db, 'customer', id),
    customerCurrencies(db, id),
  ]);
  // One lookup names the invoice of every payment, ledger entry and event shown.
  const invoiceIds = [
    ...payments.rows.map((p) => p.invoice_id),
    ...ledger.rows.flatMap((e) => (e.invoice_id ? [e.invoice_id] : [])),
    ...timeline.rows.flatMap((e) =>
      typeof e.data.invoiceId === 'string' && uuid.safeParse(e.data.invoiceId).success ? [e.data.invoiceId] : [],
    ),
  ];
  const numbers = await invoiceNumbers(db, invoiceIds);
  return {
    customer,
    subscriptions: [...subscriptions].reverse(),
    plans,
    owed: owed.get(id) ?? [],
    ledger,
    invoices,
    payments,
    numbers,
    licenses,
    apiKeys,
    timeline,
    audit,
    currencies,
  };
}

/** `/admin/customers/:id` (console.md): profile, credit and its ledger, what the customer holds, and its timeline. */
export const customerPage = definePage({
  path: '/admin/customers/:id',
  query: z.object({ timelineAfter: eventId.optional() }),
  async render({ deps, ctx, params, query, viewer, notice, state }) {
    const id = customerIdOf(params);
    const [data, rates, emails] = await Promise.all([
      loadCustomer(deps.db, id, query.timelineAfter),
      allTaxRates(deps.db),
      listEmails(deps.db, { limit: 10, newestFirst: true }, { customerId: id }),
    ]);
    const { customer } = data;
    const clock = await clockOfCustomer(deps.db, customer.test_clock_id);
    const rateNames = new Map(rates.map((r) => [r.id, rateLabel(r)]));
    const lastEvent = data.timeline.rows.at(-1);
    const productNames = new Map(customer.products.map((p) => [p.id, p.name]));
    return (
      <Layout title={customer.name} viewer={viewer} section="Customers" notice={notice}>
        <p class="crumbs">
          <a href="/admin/customers">Customers</a>
        </p>
        <h1>{customer.name}</h1>
        <TestClockNote clock={clock} />
        <p class="create-links">
          <a href={newInvoiceUrl(id)}>New invoice</a> · <a href={newSubscriptionUrl(id)}>New subscription</a> ·{' '}
          <a href={newLicenseUrl(id)}>New license</a> · <a href={newApiKeyUrl(id)}>New API key</a>
        </p>
        <div class="cards">
          <div class="card">
            <div class="label">Credit balance</div>
            <div class="value">
              <Amounts amounts={creditAmounts(customer.creditBalances)} />
            </div>
          </div>
          <div class="card">
            <div class="label">Open amount</div>
            <div class="value">
              <Amounts amounts={data.owed} />
            </div>
          </div>
          <div class="card">
            <div class="label">Health score</div>
            <div class="value">{customer.health_score}</div>
          </div>
        </div>
        <section id="profile" aria-labelledby="profile-h">
          <h2 id="profile-h">Profile</h2>
          <dl class="props">
            <dt>ID</dt>
            <dd>
              <code class="id">{customer.id}</code>
            </dd>
            <dt>Email</dt>
            <dd>{customer.email}</dd>
            <dt>Company</dt>
            <dd>{customer.company ?? '—'}</dd>
            <dt>Tier</dt>
            <dd>{customer.tier ?? '—'}</dd>
            <dt>Billing address</dt>
            <dd class="pre">{customer.billing_address ?? '—'}</dd>
            <dt>Tax ID</dt>
            <dd>{customer.tax_id ?? '—'}</dd>
            <dt>Tax status</dt>
            <dd>{TAX_STATUS[customer.tax_exempt]}</dd>
            <dt>Tax rates</dt>
            <dd>{customer.tax_rate_ids.map((r) => rateNames.get(r) ?? r).join(', ') || '—'}</dd>
            <dt>Payment method</dt>
            <dd>{label(customer.payment_method) || '—'}</dd>
            <dt>Products</dt>
            <dd>{customer.products.map((p) => p.name).join(', ') || '—'}</dd>
            <dt>Created</dt>
            <dd>
              <When value={customer.created_at} />
            </dd>
            <dt>Updated</dt>
            <dd>
              <When value={customer.updated_at} />
            </dd>
          </dl>
        </section>
        <PortalLinkSection
          customerId={id}
          csrf={viewer.csrf}
          state={state}
          link={takeReveal(ctx, servedOverHttps(ctx, deps.config))}
        />
        <details open={state?.name === 'edit'}>
          <summary>Edit profile</summary>
          <Form name="edit" action={`/admin/customers/${id}`} csrf={viewer.csrf} state={state} submit="Save changes">
            <CustomerFields form="edit" state={state} current={customer} rates={rates} />
          </Form>
        </details>
        <details open={state?.name === 'credit'}>
          <summary>Grant store credit</summary>
          <Form
            name="credit"
            action={`/admin/customers/${id}/credits`}
            csrf={viewer.csrf}
            state={state}
            submit="Grant credit"
            once
          >
            <CreditFields state={state} currencies={data.currencies} />
          </Form>
        </details>
        <LedgerSection rows={data.ledger.rows} hasMore={data.ledger.hasMore} numbers={data.numbers} />
        <SubscriptionsSection rows={data.subscriptions} plans={data.plans} />
        <InvoicesSection
          rows={data.invoices.rows.map((r) => r.invoice)}
          hasMore={data.invoices.hasMore}
          customerId={id}
        />
        <PaymentsSection
          rows={data.payments.rows}
          hasMore={data.payments.hasMore}
          numbers={data.numbers}
          customerId={id}
        />
        <LicensesSection rows={data.licenses.rows} productNames={productNames} now={new Date()} />
        <ApiKeysSection rows={data.apiKeys.rows} />
        <CustomerEmailsSection rows={emails.rows} customerId={id} more={emails.hasMore} />
        <TimelineSection
          rows={data.timeline.rows}
          numbers={data.numbers}
          next={
            data.timeline.hasMore && lastEvent
              ? `/admin/customers/${id}?timelineAfter=${lastEvent.id}#timeline`
              : undefined
          }
        />
        <AuditTrail rows={data.audit} targetType="customer" targetId={id} />
      </Layout>
    );
  },
});

/** `POST /admin/customers/:id`: the API's PUT, the same schema and service; only what the form sends changes. */
export const editCustomerAction = defineAction({
  path: '/admin/customers/:id',
  form: 'edit',
  page: customerPage,
  async run({ deps, params, form, actor }) {
    const id = customerIdOf(params);
    await updateCustomer(deps.db, id, parseOrThrow(updateCustomerBody, customerFields(form), 'body'), actor);
    return { redirect: `/admin/customers/${id}`, notice: 'Customer updated.' };
  },
});

/** `POST /admin/customers/:id/credits`: the API's store credit (D-57), spent at once on open invoices. */
export const grantCreditAction = defineAction({
  path: '/admin/customers/:id/credits',
  form: 'credit',
  page: customerPage,
  oneTime: true,
  async run({ deps, params, form, actor }) {
    const id = customerIdOf(params);
    const input = parseOrThrow(
      createCreditBody,
      {
        customerId: id,
        amount: typedField(form, 'amount'),
        description: typedField(form, 'description'),
        currency: typedField(form, 'currency') || undefined,
      },
      'body',
    );
    const { entry, applications, balanceAfter } = await grantCredit(deps.db, input, actor);
    const spent = applications.length
      ? `; ${money(sumMoney(applications.map((a) => a.amount)).toString(), entry.currency)} applied to ` +
        `${applications.map((a) => a.invoice.invoice_number).join(', ')}`
      : '';
    return {
      redirect: `/admin/customers/${id}`,
      notice:
        `Granted ${money(entry.amount, entry.currency)} of store credit${spent}. Balance: ` +
        `${money(balanceAfter, entry.currency)}.`,
    };
  },
});

export const customerDetailRoutes = [customerPage, editCustomerAction, grantCreditAction];
