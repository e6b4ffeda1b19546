/** What the catalog pages share: the product and plan forms (fields named as the API's JSON) and how a plan reads. */
import { PRICING_MODELS } from '../../plans/schema.ts';
import type { getPlan } from '../../plans/service.ts';
import { PRODUCT_TYPES } from '../../products/schema.ts';
import type { getProduct } from '../../products/service.ts';
import { BILLING_CYCLES } from '../../plans/cycles.ts';
import { Field, kept, type FormState } from '../components/Form.tsx';
import { money } from '../components/format.ts';
import { field, listField, typedField, type FormValues } from '../http/form.ts';
import { TaxRateChoice } from '../components/TaxRateChoice.tsx';
import type { TaxRateRow } from '../../tax-rates/service.ts';
import type { MetricRow } from '../../metering/service.ts';
import { ChargeRows, chargeFields } from './plan-charges.tsx';

// Row types as the services answer them (a console page reads no domain's repo, not even for a type).
export type Product = Awaited<ReturnType<typeof getProduct>>;
export type Plan = Awaited<ReturnType<typeof getPlan>>;

/** The currency a new product's price is in unless the admin says otherwise (the API's default). */
const DEFAULT_PRODUCT_CURRENCY = 'USD';

/**
 * The product form as the API's JSON: required fields as typed (so an empty one gets the schema's message),
 * an empty currency left to the API's default, an emptied description cleared (null).
 */
export function productFields(form: FormValues) {
  const description = typedField(form, 'description');
  return {
    name: typedField(form, 'name'),
    productType: field(form, 'productType'),
    price: typedField(form, 'price'),
    currency: field(form, 'currency'),
    // A browser posts a textarea's line breaks as CRLF; the API's callers send LF, so the stored text agrees.
    description:
      description === undefined ? undefined : description.trim() === '' ? null : description.replace(/\r\n?/g, '\n'),
  };
}

/**
 * The create and edit forms of a product (name, productType, price, currency, description). The edit form
 * starts from the stored values as stored (the price unformatted), so saving it unchanged changes nothing.
 * No `required`: the browser would refuse the post itself, and C-6 wants the service's message.
 */
export function ProductFields({ form, state, current }: { form: string; state?: FormState; current?: Product }) {
  const mine = state?.name === form ? state : undefined;
  const value = (name: string, stored: string | null | undefined) => kept(state, form, name, stored ?? '');
  return (
    <>
      <Field label="Name" name="name" value={value('name', current?.name)} state={mine} />
      <Field
        label="Type"
        name="productType"
        options={PRODUCT_TYPES}
        value={value('productType', current?.product_type)}
        state={mine}
      />
      <Field label="Price" name="price" value={value('price', current?.price)} state={mine} />
      <Field
        label="Currency"
        name="currency"
        value={value('currency', current?.currency ?? DEFAULT_PRODUCT_CURRENCY)}
        state={mine}
      />
      <Field
        label="Description"
        name="description"
        type="textarea"
        value={value('description', current?.description)}
        state={mine}
      />
    </>
  );
}

/** The create-plan form as the API's JSON; the product is the page's; `metricIds` maps charge metric codes to ids. */
export function planFields(form: FormValues, productId: string, metricIds = new Map<string, string>()) {
  return {
    charges: chargeFields(form, metricIds),
    productId,
    name: typedField(form, 'name'),
    pricingModel: field(form, 'pricingModel'),
    billingCycle: field(form, 'billingCycle'),
    basePrice: typedField(form, 'basePrice'),
    currency: typedField(form, 'currency'),
    taxRateIds: listField(form, 'taxRateIds'),
  };
}

/** A plan's price and cycle as one short line: `99.00 USD / monthly`. */
export const planPrice = (plan: Plan) => `${money(plan.base_price, plan.currency)} / ${plan.billing_cycle}`;

/** The create-plan form's fields (productId, name, pricingModel, billingCycle, basePrice, currency). */
export function PlanFields({
  form,
  state,
  currency,
  rates,
  metrics = [],
}: {
  form: string;
  state?: FormState;
  currency: string;
  rates: TaxRateRow[];
  metrics?: MetricRow[];
}) {
  const mine = state?.name === form ? state : undefined;
  return (
    <>
      <Field label="Name" name="name" value={kept(state, form, 'name')} state={mine} />
      <Field
        label="Pricing model"
        name="pricingModel"
        options={PRICING_MODELS}
        value={kept(state, form, 'pricingModel', 'flat')}
        state={mine}
      />
      <Field
        label="Billing cycle"
        name="billingCycle"
        options={BILLING_CYCLES}
        value={kept(state, form, 'billingCycle', 'monthly')}
        state={mine}
      />
      <Field label="Base price" name="basePrice" value={kept(state, form, 'basePrice')} state={mine} />
      <Field label="Currency" name="currency" value={kept(state, form, 'currency', currency)} state={mine} />
      <ChargeRows form={form} state={state} metrics={metrics} />
      <TaxRateChoice
        rates={rates}
        chosen={mine ? (listField(mine.values, 'taxRateIds') ?? []) : []}
        state={state}
        form={form}
      />
    </>
  );
}

/** A select's `true`/`false` as the API's boolean; anything else stays text, for the schema to name. */
export function booleanField(form: FormValues, name: string): boolean | string | undefined {
  const value = field(form, name);
  return value === 'true' ? true : value === 'false' ? false : value;
}
