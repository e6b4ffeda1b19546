/**
 * `/portal/billing` (P-6): `name`, `company`, `billingAddress`, `taxId`, saved through the customer service with the
 * admin API's schema (the same refusals, beside their fields). Without `billing_details` (P-7) the details are shown
 * and no form.
 */
import { Field, Form, kept } from '../console/components/Form.tsx';
import { typedField } from '../console/http/form.ts';
import { findCustomer } from '../customers/service.ts';
import { updateCustomerBody } from '../customers/schema.ts';
import { parseOrThrow } from '../http/validate.ts';
import { updateBillingDetails } from '../portal/actions.ts';
import { PortalLayout } from './layout.tsx';
import { portalAction, portalPage } from './route.ts';

const FORM = 'billing';
const billingBody = updateCustomerBody.pick({ name: true, company: true, billingAddress: true, taxId: true });

export const billingPage = portalPage({
  path: '/portal/billing',
  async render({ deps, viewer, notice, state }) {
    const customer = await findCustomer(deps.db, viewer.customerId);
    const value = (name: string, stored: string | null) => kept(state, FORM, name, stored ?? '');
    return (
      <PortalLayout title="Billing details" viewer={viewer} section="Billing details" notice={notice}>
        <h1>Billing details</h1>
        <section class="card">
          <p class="muted">{`Invoices are sent to ${customer.email}.`}</p>
          {viewer.features.has('billing_details') ? (
            <Form name={FORM} action="/portal/billing" csrf={viewer.csrf} state={state} submit="Save">
              <Field label="Name" name="name" value={value('name', customer.name)} required state={state} />
              <Field label="Company" name="company" value={value('company', customer.company)} state={state} />
              <Field
                label="Billing address"
                name="billingAddress"
                type="textarea"
                value={value('billingAddress', customer.billing_address)}
                state={state}
              />
              <Field label="Tax id" name="taxId" value={value('taxId', customer.tax_id)} state={state} />
            </Form>
          ) : (
            <dl class="facts">
              <dt>Name</dt>
              <dd>{customer.name}</dd>
              <dt>Company</dt>
              <dd>{customer.company ?? '—'}</dd>
              <dt>Billing address</dt>
              <dd class="address">{customer.billing_address ?? '—'}</dd>
              <dt>Tax id</dt>
              <dd>{customer.tax_id ?? '—'}</dd>
            </dl>
          )}
        </section>
      </PortalLayout>
    );
  },
});

/** `POST /portal/billing`: PUT /api/customers/:id's schema for these four fields, and its service. */
export const billingAction = portalAction({
  path: '/portal/billing',
  form: FORM,
  page: billingPage,
  async run({ deps, form, viewer }) {
    const body = parseOrThrow(
      billingBody,
      {
        name: typedField(form, 'name'),
        company: typedField(form, 'company'),
        billingAddress: typedField(form, 'billingAddress')?.replace(/\r\n?/g, '\n'),
        taxId: typedField(form, 'taxId'),
      },
      'body',
    );
    await updateBillingDetails(deps.db, viewer.actor, body);
    return { redirect: '/portal/billing', notice: 'Your billing details are saved.' };
  },
});
